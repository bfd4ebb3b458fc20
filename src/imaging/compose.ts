// The cut-out: the image with the mask as its alpha, edge colours cleaned of the old
// background, and nothing left under fully transparent pixels.
import type { RGBA } from "./types.ts";
import { estimateForegroundInPlace } from "./foreground.ts";

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
  const { width, height } = img;
  const n = width * height;
  if (alpha.length !== n) throw new RangeError(`composeCutout: ${alpha.length} mask values for ${width} x ${height}`);
  const out = new Uint8ClampedArray(img.data);
  estimateForegroundInPlace(out, alpha, width, height);
  const hard = !opts.semitransparency;
  for (let p = 0, i = 0; p < n; p++, i += 4) {
    let m = alpha[p];
    if (hard) m = m >= HARD_ALPHA_THRESHOLD ? 255 : 0;
    if (m === 255) continue; // colour and any input alpha stay as they are
    const a = m === 0 ? 0 : Math.round((m * out[i + 3]) / 255);
    out[i + 3] = a;
    if (a === 0) {
      // Colour under alpha 0 is invisible but survives in the file; clear it so the
      // PNG compresses better and does not carry the removed background.
      out[i] = 0;
      out[i + 1] = 0;
      out[i + 2] = 0;
    }
  }
  return { width, height, data: out };
}
