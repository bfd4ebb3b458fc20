// Price tiers (interface spec, Endpoints): the amount reserved before processing
// follows the requested `size`; the amount captured follows the output's pixels.

export const PREVIEW_PRICE_KRW = 22;
export const FULL_PRICE_KRW = 110;
/** Outputs of at most this many pixels (0.25 MP) are charged at the preview price. */
export const PREVIEW_MAX_PIXELS = 250_000;

export type SizeParam = "preview" | "small" | "regular" | "auto" | "full";

/** preview|small|regular → 22; auto|full|omitted → 110 (the largest it could cost). */
export function reserveAmountForSize(size: SizeParam | undefined): number {
  switch (size) {
    case "preview":
    case "small":
    case "regular":
      return PREVIEW_PRICE_KRW;
    default:
      return FULL_PRICE_KRW;
  }
}

/** The charge for an output of `pixels` (width × height). */
export function priceForPixels(pixels: number): number {
  return pixels <= PREVIEW_MAX_PIXELS ? PREVIEW_PRICE_KRW : FULL_PRICE_KRW;
}
