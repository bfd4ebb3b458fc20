// Output size per requested `size`. preview, small and regular all mean the preview
// tier: at most 0.25 megapixels, which is also what billing charges the preview price
// for (≤ 250,000 output pixels). auto, full or nothing: the input size.

export type OutputSizeName = "preview" | "small" | "regular" | "auto" | "full";

export const PREVIEW_MAX_PIXELS = 250_000;

/**
 * Keeps the aspect ratio, never enlarges, keeps each side ≥ 1 and guarantees
 * width * height ≤ 250,000 for the preview names. Sides are rounded down, so the
 * result may be a pixel smaller than the exact scale would give.
 */
export function outputSize(
  width: number,
  height: number,
  size: OutputSizeName | undefined,
): { width: number; height: number } {
  if (size !== "preview" && size !== "small" && size !== "regular") return { width, height };
  if (width * height <= PREVIEW_MAX_PIXELS) return { width, height };
  const scale = Math.sqrt(PREVIEW_MAX_PIXELS / (width * height));
  let w = Math.max(1, Math.floor(width * scale));
  let h = Math.max(1, Math.floor(height * scale));
  // Only a very thin image gets here with a side clamped up to 1; then the other side
  // must give way for the product to stay within the limit.
  if (w * h > PREVIEW_MAX_PIXELS) {
    if (w === 1) h = PREVIEW_MAX_PIXELS;
    else w = Math.floor(PREVIEW_MAX_PIXELS / h);
  }
  return { width: w, height: h };
}
