// Reads an image's format, size and EXIF orientation from its header alone, so that
// oversized or broken uploads are refused before any pixel memory is allocated.
import { imagingFailure, type ImagingFailure, type Orientation } from "./types.ts";
import type { ImageHeader } from "./header-types.ts";
import { sniffFormat } from "./sniff.ts";
import { readJpegHeader } from "./header-jpeg.ts";
import { readPngHeader } from "./header-png.ts";
import { readWebpHeader } from "./header-webp.ts";

export type { ImageHeader } from "./header-types.ts";

/** The spec's input limit: 12 megapixels. */
export const MAX_PIXELS = 12_000_000;

export function readImageHeader(bytes: Uint8Array): ImageHeader | ImagingFailure {
  switch (sniffFormat(bytes)) {
    case "jpeg":
      return readJpegHeader(bytes);
    case "png":
      return readPngHeader(bytes);
    case "webp":
      return readWebpHeader(bytes);
    default:
      return imagingFailure("The file is not a JPEG, PNG or WebP image");
  }
}

/** Digit grouping with commas, independent of the runtime's locale data. */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function checkPixelLimit(
  size: { width: number; height: number },
  maxPixels: number = MAX_PIXELS,
): { ok: true } | ImagingFailure {
  const pixels = size.width * size.height;
  if (pixels <= maxPixels) return { ok: true };
  return imagingFailure(
    `Image is ${size.width} x ${size.height} pixels (${grouped(pixels)}); the limit is ${grouped(maxPixels)} pixels`,
  );
}

/** The displayed size once the orientation is applied: 5-8 swap the sides. */
export function orientedSize(width: number, height: number, orientation: Orientation): { width: number; height: number } {
  return orientation >= 5 ? { width: height, height: width } : { width, height };
}
