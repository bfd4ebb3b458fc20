// Output size per requested `size`. preview, small and regular all mean the preview
// tier: at most 0.25 megapixels, which is also what billing charges the preview price
// for (≤ 250,000 output pixels). auto, full or nothing: the input size.

export type OutputSizeName = "preview" | "small" | "regular" | "auto" | "full";

export const PREVIEW_MAX_PIXELS = 250_000;

/**
 * Keeps the aspect ratio, never enlarges, keeps each side ≥ 1 and guarantees
 * width * height ≤ 250,000 for the preview names. Sides are rounded down, so each
 * is less than a pixel short of the exact scale.
 */
export function outputSize(
  width: number,
  height: number,
  size: OutputSizeName | undefined,
): { width: number; height: number } {
  if (size !== "preview" && size !== "small" && size !== "regular") return { width, height };
  if (width * height <= PREVIEW_MAX_PIXELS) return { width, height };
  const scale = Math.sqrt(PREVIEW_MAX_PIXELS / (width * height));
  // The epsilon stops 499.99999997 (floating-point noise for an exact 500) from
  // rounding down to 499; the loop below still enforces the limit exactly.
  let w = Math.min(width, Math.max(1, Math.floor(width * scale + 1e-7)));
  let h = Math.min(height, Math.max(1, Math.floor(height * scale + 1e-7)));
  // Too many pixels only after the epsilon or after a very thin side was raised to 1:
  // take pixels off the longer side.
  while (w * h > PREVIEW_MAX_PIXELS) {
    if (w >= h) w = Math.max(1, Math.min(w - 1, Math.floor(PREVIEW_MAX_PIXELS / h)));
    else h = Math.max(1, Math.min(h - 1, Math.floor(PREVIEW_MAX_PIXELS / w)));
  }
  return { width: w, height: h };
}
