// Bytes to RGBA pixels, for every input kind the service accepts. The header is read
// and the pixel limit checked first, so an oversized or malformed file is refused
// before any codec allocates memory for it. Bad input always comes back as a
// failure value; only a broken installation (missing .wasm) throws.
import { imagingFailure, type ImagingFailure, type RGBA } from "./types.ts";
import type { Codecs, CodecOutcome } from "./codec-types.ts";
import { defaultCodecs } from "./codecs.ts";
import { checkPixelLimit, MAX_PIXELS, orientedSize, readImageHeader, type ImageHeader } from "./header.ts";
import { countJpegScans } from "./header-jpeg.ts";
import type { PixelMemory } from "./glue-pixels-into.ts";
import { scaledSide } from "./codec-jpeg-turbo.ts";

/** Width and height, in pixels. */
export interface Sides {
  width: number;
  height: number;
}

/**
 * Progressive JPEGs usually have about 10 scans. Each scan re-walks the whole image,
 * so a file with thousands of tiny scans costs seconds of CPU for a normal size;
 * refuse those outright.
 */
export const MAX_JPEG_SCANS = 500;

export interface DecodeOptions {
  /** Defaults to this thread's shared codec set. */
  codecs?: Codecs;
  /** Defaults to MAX_PIXELS (12,000,000). */
  maxPixels?: number;
  /**
   * Memory for the decoded pixels (JPEG and WebP; other formats ignore it): the pipeline
   * passes memory its helper threads share, so the pixels are not copied again.
   */
  into?: PixelMemory;
  /**
   * The smallest picture the caller needs, upright (EXIF orientation applied): a JPEG then
   * decodes at the fewest eighths of its size whose sides are still at least these
   * (libjpeg's DCT scaling; decodeEighths). Absent, or another format: full size.
   */
  atLeast?: Sides;
}

/**
 * `image` is as stored (not yet turned upright), at `eighths`/8 of the header's size
 * (8: full size; only a JPEG decoded with DecodeOptions.atLeast is smaller).
 */
export type DecodeResult = { ok: true; image: RGBA; header: ImageHeader; eighths: number } | ImagingFailure;

/**
 * The fewest eighths (1..8) of `stored` whose scaled sides (rounded up, as libjpeg does)
 * are still at least `need`'s: the largest reduction that loses nothing the caller uses.
 */
export function jpegEighths(stored: Sides, need: Sides): number {
  for (let k = 1; k < 8; k++) {
    if (scaledSide(stored.width, k) >= need.width && scaledSide(stored.height, k) >= need.height) return k;
  }
  return 8;
}

/**
 * The scale decodeImage decodes an image of this header at, in eighths, when the caller
 * needs `atLeast` (upright): below 8 only for a YCbCr or grey JPEG (the CMYK decoder and
 * the PNG and WebP ones decode at full size). `atLeast` is turned to the stored sides first.
 */
export function decodeEighths(header: ImageHeader, atLeast: Sides | undefined): number {
  if (!atLeast || header.format !== "jpeg" || header.components === 4) return 8;
  return jpegEighths(header, orientedSize(atLeast.width, atLeast.height, header.orientation));
}

const NAMES = { jpeg: "JPEG", png: "PNG", webp: "WebP" } as const;

export async function decodeImage(bytes: Uint8Array, options: DecodeOptions = {}): Promise<DecodeResult> {
  const maxPixels = options.maxPixels ?? MAX_PIXELS;
  const header = readImageHeader(bytes);
  if (!header.ok) return header;
  const limit = checkPixelLimit(header, maxPixels);
  if (!limit.ok) return limit;

  const codecs = options.codecs ?? defaultCodecs();
  let outcome: CodecOutcome;
  let eighths = 8;
  switch (header.format) {
    case "jpeg": {
      const scans = countJpegScans(bytes);
      if (scans > MAX_JPEG_SCANS) {
        return imagingFailure(`The JPEG file has ${scans} scans; at most ${MAX_JPEG_SCANS} are accepted`);
      }
      if (header.components === 4) {
        outcome = await codecs.decodeCmykJpeg(bytes);
        break;
      }
      eighths = decodeEighths(header, options.atLeast);
      outcome = await codecs.decodeJpeg(bytes, options.into, eighths);
      break;
    }
    case "png":
      outcome = await codecs.decodePng(bytes);
      break;
    case "webp":
      outcome = await codecs.decodeWebp(bytes, options.into);
      break;
  }

  const name = NAMES[header.format];
  if (!outcome.ok) {
    return outcome.truncated
      ? imagingFailure(`The ${name} file is truncated: its image data ends early`, outcome.reason)
      : imagingFailure(`The ${name} image data is corrupt or not supported and could not be decoded`, outcome.reason);
  }
  const { image } = outcome;
  // The decoder must agree with the header we checked; if not, the file is
  // inconsistent and the limit we enforced may not describe what was decoded.
  const expected = { width: scaledSide(header.width, eighths), height: scaledSide(header.height, eighths) };
  if (image.width !== expected.width || image.height !== expected.height) {
    const scale = eighths === 8 ? "" : ` (decoded at ${eighths}/8: ${expected.width} x ${expected.height} expected)`;
    return imagingFailure(
      `The ${name} file is inconsistent: its header says ${header.width} x ${header.height}, its data ${image.width} x ${image.height}${scale}`,
    );
  }
  const decodedLimit = checkPixelLimit(image, maxPixels);
  if (!decodedLimit.ok) return decodedLimit;
  if (image.data.length !== image.width * image.height * 4) {
    return imagingFailure(`The ${name} decoder returned an unexpected amount of pixel data`);
  }
  return { ok: true, image, header, eighths };
}
