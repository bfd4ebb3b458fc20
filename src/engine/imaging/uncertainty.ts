// X-PD-Uncertainty: how unsure the mask is about where the subject ends. Read from the
// model's own mask (its input size, before any resize), so the number does not depend
// on the output size the client asked for.
//
// Definition: of all pixels the mask gives any weight to the subject (value above
// OUT), the share that is neither clearly out nor clearly in (value below IN). A clean
// studio shot has a thin soft band around a solid subject (a small share); a cluttered
// scene gives broad half-sure regions (a large share). No subject at all is 1: nothing
// was found with confidence. Documented in docs/DECISIONS.md with how to use it.

/** Mask values at or below this count as clearly background (10% of 255). */
export const UNCERTAIN_OUT = 25;
/** Mask values at or above this count as clearly subject (90% of 255). */
export const UNCERTAIN_IN = 230;

/** A number in [0, 1], rounded to 3 decimals. */
export function maskUncertainty(mask: Uint8Array): number {
  let touched = 0;
  let unsure = 0;
  for (let i = 0; i < mask.length; i++) {
    const m = mask[i]!;
    if (m <= UNCERTAIN_OUT) continue;
    touched++;
    if (m < UNCERTAIN_IN) unsure++;
  }
  if (touched === 0) return 1;
  return Math.round((unsure / touched) * 1000) / 1000;
}
