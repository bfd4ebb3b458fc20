import type { ImageFormat, Orientation } from "./types.ts";

/**
 * What the container says about the image, read without decoding pixels.
 * `width` and `height` are the stored dimensions, before EXIF orientation is applied
 * (orientations 5-8 swap them on display; see `orientedSize`).
 */
export interface ImageHeader {
  ok: true;
  format: ImageFormat;
  width: number;
  height: number;
  orientation: Orientation;
  /**
   * Stored components: JPEG 1 (grey), 3 (YCbCr/RGB) or 4 (CMYK/YCCK); PNG and WebP
   * the decoded channel count including alpha (1 grey ... 4 RGBA).
   */
  components: number;
  /** The file declares transparency (alpha channel, tRNS, WebP alpha flag). */
  hasAlpha: boolean;
}
