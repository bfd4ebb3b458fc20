// Reads the EXIF orientation (TIFF IFD0 tag 0x0112) from a TIFF-structured block, the
// payload every container uses for EXIF: JPEG APP1 (after "Exif\0\0"), PNG eXIf and
// WebP EXIF. A broken or missing tag yields 1 (upright): browsers ignore bad EXIF
// and show the pixels as stored, and refusing the whole image over it would help
// nobody.
import type { Orientation } from "./types.ts";

const TAG_ORIENTATION = 0x0112;
const TYPE_SHORT = 3;
const TYPE_LONG = 4;

export function readExifOrientation(tiff: Uint8Array): Orientation {
  if (tiff.length < 8) return 1;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  // "II" = little-endian (Intel), "MM" = big-endian (Motorola), then the magic 42.
  const order = view.getUint16(0);
  if (order !== 0x4949 && order !== 0x4d4d) return 1;
  const le = order === 0x4949;
  if (view.getUint16(2, le) !== 42) return 1;
  const ifd = view.getUint32(4, le);
  if (ifd < 8 || ifd + 2 > tiff.length) return 1;
  const count = view.getUint16(ifd, le);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.length) return 1;
    if (view.getUint16(entry, le) !== TAG_ORIENTATION) continue;
    const type = view.getUint16(entry + 2, le);
    // A single value of up to 4 bytes is stored inline, left-aligned in the field.
    const value =
      type === TYPE_SHORT ? view.getUint16(entry + 8, le) : type === TYPE_LONG ? view.getUint32(entry + 8, le) : 0;
    return value >= 1 && value <= 8 ? (value as Orientation) : 1;
  }
  return 1;
}

/** Strips the "Exif\0\0" prefix some writers put in front of the TIFF block. */
export function withoutExifPrefix(block: Uint8Array): Uint8Array {
  const hasPrefix =
    block.length >= 6 &&
    block[0] === 0x45 && block[1] === 0x78 && block[2] === 0x69 && block[3] === 0x66 &&
    block[4] === 0 && block[5] === 0;
  return hasPrefix ? block.subarray(6) : block;
}
