// The cut-out: the image with the mask as its alpha, edge colours cleaned of the old
// background, and nothing left under fully transparent pixels.
import type { RGBA } from "./types.ts";
import { estimateForegroundInPlace } from "./foreground.ts";
import { LITTLE_ENDIAN } from "./resample-fast.ts";

export interface ComposeOptions {
  /** true: keep the mask's soft alpha; false: every pixel fully opaque or fully transparent. */
  semitransparency: boolean;
}

/** Mask values at or above this become opaque when semitransparency is off. */
export const HARD_ALPHA_THRESHOLD = 128;

/**
 * `alpha` is the mask at the image's size (one byte per pixel). The result's alpha is
 * the mask (hardened if asked) times any alpha the input already had. Edge colours
 * are estimated from the soft mask even when the output is hardened, so pixels that
 * become opaque at the edge do not keep the old background's tint.
 */
export function composeCutout(img: RGBA, alpha: Uint8Array, opts: ComposeOptions): RGBA {
  const out = { width: img.width, height: img.height, data: new Uint8ClampedArray(img.data) };
  composeCutoutInPlace(out, alpha.slice(), opts);
  return out;
}

/**
 * composeCutout without copies, for a caller that owns both buffers (the pipeline: at
 * 12 MP a copy of the image is 48 MB and about 20 ms): `img` becomes the cut-out and
 * `alpha` its final alpha channel, ready for the bounding box or a greyscale PNG.
 */
export function composeCutoutInPlace(img: RGBA, alpha: Uint8Array, opts: ComposeOptions): void {
  const { width, height } = img;
  const n = width * height;
  if (alpha.length !== n) throw new RangeError(`composeCutout: ${alpha.length} mask values for ${width} x ${height}`);
  estimateForegroundInPlace(img.data, alpha, width, height);
  applyMaskAlpha(img.data, alpha, !opts.semitransparency, 0, n);
}

/**
 * The last step of a cut-out, for pixels p0 ≤ p < p1 (after the edge colours): the mask
 * (hardened if `hard`) times the input's alpha becomes both the pixel's alpha and the
 * mask's value. Pixel by pixel, so bands done apart give the same bytes.
 */
export function applyMaskAlpha(out: Uint8ClampedArray, alpha: Uint8Array, hard: boolean, p0: number, p1: number): void {
  if (LITTLE_ENDIAN && out.byteOffset % 4 === 0) applyMaskAlphaWords(new Uint32Array(out.buffer, out.byteOffset, out.length >> 2), alpha, hard, p0, p1);
  else applyMaskAlphaBytes(out, alpha, hard, p0, p1);
}

/**
 * applyMaskAlpha a pixel at a time as one 32-bit word (alpha in the high byte on a
 * little-endian machine): at 12 MP about a quarter of the byte-wise time (measured),
 * since most pixels are only a read and maybe one store. Same bytes as
 * applyMaskAlphaBytes (tested).
 */
function applyMaskAlphaWords(px: Uint32Array, alpha: Uint8Array, hard: boolean, p0: number, p1: number): void {
  // Mask values four at a time, to pass over runs of 0 (most of a cut-out's background).
  const quads = alpha.byteOffset % 4 === 0 ? new Uint32Array(alpha.buffer, alpha.byteOffset, alpha.length >> 2) : undefined;
  let p = p0;
  while (p < p1) {
    let m = alpha[p];
    if (m === 0) {
      // A run of 0: every pixel becomes 0 (alpha 0, invisible colour cleared, see
      // applyMaskAlphaBytes), and the mask stays 0.
      let q = p + 1;
      while (q < p1 && (q & 3) !== 0 && alpha[q] === 0) q++;
      if (quads && (q & 3) === 0) while (q + 4 <= p1 && quads[q >> 2] === 0) q += 4;
      while (q < p1 && alpha[q] === 0) q++;
      px.fill(0, p, q);
      p = q;
      continue;
    }
    if (hard) m = m >= HARD_ALPHA_THRESHOLD ? 255 : 0;
    const word = px[p];
    const inputAlpha = word >>> 24;
    if (m === 255) {
      alpha[p++] = inputAlpha;
      continue;
    }
    const a = m === 0 ? 0 : inputAlpha === 255 ? m : Math.round((m * inputAlpha) / 255);
    alpha[p] = a;
    px[p++] = a === 0 ? 0 : (word & 0xffffff) | (a << 24);
  }
}

/** applyMaskAlpha byte by byte: for memory a word view cannot cover. */
export function applyMaskAlphaBytes(out: Uint8ClampedArray, alpha: Uint8Array, hard: boolean, p0: number, p1: number): void {
  for (let p = p0, i = p0 * 4 + 3; p < p1; p++, i += 4) {
    let m = alpha[p];
    if (hard) m = m >= HARD_ALPHA_THRESHOLD ? 255 : 0;
    const inputAlpha = out[i];
    if (m === 255) {
      alpha[p] = inputAlpha; // colour and any input alpha stay as they are
      continue;
    }
    // An opaque input pixel (every JPEG's) takes the mask as it is: no division.
    const a = m === 0 ? 0 : inputAlpha === 255 ? m : Math.round((m * inputAlpha) / 255);
    out[i] = a;
    alpha[p] = a;
    if (a === 0) {
      // Colour under alpha 0 is invisible but survives in the file; clear it so the
      // PNG compresses better and does not carry the removed background.
      out[i - 3] = 0;
      out[i - 2] = 0;
      out[i - 1] = 0;
    }
  }
}
