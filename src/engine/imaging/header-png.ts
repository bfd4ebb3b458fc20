// PNG header: IHDR for the dimensions, then the chunks before the first IDAT for
// transparency (tRNS) and EXIF orientation (eXIf). Image data is never inflated.
import { imagingFailure, type ImagingFailure, type Orientation } from "./types.ts";
import type { ImageHeader } from "./header-types.ts";
import { readExifOrientation } from "./exif-orientation.ts";

/** Allowed bit depths per colour type (PNG spec, table 11.1). */
const DEPTHS: Record<number, readonly number[]> = {
  0: [1, 2, 4, 8, 16], // grey
  2: [8, 16], // RGB
  3: [1, 2, 4, 8], // palette
  4: [8, 16], // grey + alpha
  6: [8, 16], // RGBA
};
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 3, 4: 2, 6: 4 };
/** PNG stores sizes as 31-bit unsigned integers. */
const MAX_DIMENSION = 0x7fffffff;

const truncated = (): ImagingFailure => imagingFailure("The PNG file is truncated before its image data");

function chunkType(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
}

export function readPngHeader(bytes: Uint8Array): ImageHeader | ImagingFailure {
  // signature(8) + IHDR length(4) type(4) data(13) crc(4)
  if (bytes.length < 33) return imagingFailure("The PNG file is truncated before its header ends");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(8) !== 13 || chunkType(bytes, 12) !== "IHDR") {
    return imagingFailure("The PNG file is corrupt: it does not start with an IHDR chunk");
  }
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  const depth = bytes[24];
  const colourType = bytes[25];
  if (width === 0 || height === 0 || width > MAX_DIMENSION || height > MAX_DIMENSION) {
    return imagingFailure(`The PNG header declares an invalid size (${width} x ${height})`);
  }
  if (!DEPTHS[colourType]?.includes(depth)) {
    return imagingFailure(`The PNG header declares an invalid colour type ${colourType} with bit depth ${depth}`);
  }
  if (bytes[26] !== 0 || bytes[27] !== 0 || bytes[28] > 1) {
    return imagingFailure("The PNG header declares an unknown compression, filter or interlace method");
  }

  let hasAlpha = colourType === 4 || colourType === 6;
  let orientation: Orientation = 1;
  for (let pos = 33; ; ) {
    if (pos + 8 > bytes.length) return truncated();
    const length = view.getUint32(pos);
    const type = chunkType(bytes, pos + 4);
    const dataStart = pos + 8;
    const next = dataStart + length + 4; // + CRC
    if (type === "IDAT") break; // the image data itself; no need to look further
    if (type === "IEND") return imagingFailure("The PNG file has no image data");
    if (next > bytes.length) return truncated();
    if (type === "tRNS") hasAlpha = true;
    if (type === "eXIf") orientation = readExifOrientation(bytes.subarray(dataStart, dataStart + length));
    pos = next;
  }
  const components = CHANNELS[colourType] + (hasAlpha && colourType !== 4 && colourType !== 6 ? 1 : 0);
  return { ok: true, format: "png", width, height, orientation, components, hasAlpha };
}
