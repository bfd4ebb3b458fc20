// Format detection from the first bytes of the file. File names and multipart
// content types are chosen by the client and prove nothing, so they are never used.
import type { ImageFormat } from "./types.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));
const RIFF = ascii("RIFF");
const WEBP = ascii("WEBP");

export function sniffFormat(bytes: Uint8Array): ImageFormat | null {
  // SOI followed by the first byte of a marker. Every JPEG we can decode has this.
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (startsWith(bytes, PNG_SIGNATURE)) return "png";
  // "RIFF" <size:4> "WEBP"
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return "webp";
  return null;
}
