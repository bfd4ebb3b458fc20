// Prices (interface spec, Endpoints): one amount per tier. Which tier a size or an
// output is in is src/contract/tiers.ts's rule; this file only says what a tier costs.
// The amount reserved before processing follows the requested size's tier (the most
// the call can cost); the amount captured follows the output's pixels.
import { tierOfPixels, tierOfSize, type Size, type Tier } from "../contract/tiers.ts";

export const PRICE_KRW: Readonly<Record<Tier, number>> = { preview: 22, full: 110 };
export const PREVIEW_PRICE_KRW = PRICE_KRW.preview;
export const FULL_PRICE_KRW = PRICE_KRW.full;

/** preview|small|regular → 22; auto|full|omitted → 110 (the largest it could cost). */
export function reserveAmountForSize(size: Size | undefined): number {
  return PRICE_KRW[tierOfSize(size)];
}

/** The charge for an output of `pixels` (width × height). */
export function priceForPixels(pixels: number): number {
  return PRICE_KRW[tierOfPixels(pixels)];
}
