// Format detection from the first bytes of the file. File names and multipart
// content types are chosen by the client and prove nothing, so they are never used.
import type { ImageFormat } from "./types.ts";
import { bytesAt } from "./bytes.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));
const RIFF = ascii("RIFF");
const WEBP = ascii("WEBP");

export function sniffFormat(bytes: Uint8Array): ImageFormat | null {
  // SOI followed by the first byte of a marker. Every JPEG we can decode has this.
  if (bytesAt(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (bytesAt(bytes, PNG_SIGNATURE)) return "png";
  // "RIFF" <size:4> "WEBP"
  if (bytesAt(bytes, RIFF) && bytesAt(bytes, WEBP, 8)) return "webp";
  return null;
}
