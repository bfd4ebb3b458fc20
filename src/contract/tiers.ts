// The size → tier → output-pixels rule, in one place (interface spec, Endpoints).
// `size` names one of two tiers: preview, small and regular mean the preview tier (at
// most 0.25 megapixels out); auto, full or nothing mean the full tier (the input's
// size). The charge follows the tier of the output's pixels, so the same bound decides
// what a preview may hold and what is charged the preview price (src/billing/prices.ts
// maps a tier to won). The gateway, the product, the library, the CLI and the OpenAPI
// document all read the sizes and tiers from here.

export const SIZES = ["preview", "small", "regular", "auto", "full"] as const;
export type Size = (typeof SIZES)[number];
export type Tier = "preview" | "full";

/** The sizes that mean the preview tier, in SIZES order. */
export const PREVIEW_SIZES: readonly Size[] = ["preview", "small", "regular"];
/** The sizes that mean the full tier (as does an omitted size), in SIZES order. */
export const FULL_SIZES: readonly Size[] = SIZES.filter((s) => !PREVIEW_SIZES.includes(s));

/** Outputs of at most this many pixels are the preview tier. */
export const PREVIEW_MAX_PIXELS = 250_000;

export function isSize(v: string): v is Size {
  return (SIZES as readonly string[]).includes(v);
}

/** The tier a requested size asks for (omitted: full). */
export function tierOfSize(size: Size | undefined): Tier {
  return size !== undefined && PREVIEW_SIZES.includes(size) ? "preview" : "full";
}

/** The tier an output of `pixels` (width × height) falls in. */
export function tierOfPixels(pixels: number): Tier {
  return pixels <= PREVIEW_MAX_PIXELS ? "preview" : "full";
}

/**
 * Output size for a requested `size`. Keeps the aspect ratio, never enlarges, keeps
 * each side ≥ 1 and guarantees width * height ≤ PREVIEW_MAX_PIXELS for the preview
 * tier. Sides are rounded down, so each is less than a pixel short of the exact scale.
 */
export function outputSize(
  width: number,
  height: number,
  size: Size | undefined,
): { width: number; height: number } {
  if (tierOfSize(size) !== "preview") return { width, height };
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
