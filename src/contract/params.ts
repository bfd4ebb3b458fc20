// The removebg form's vocabulary: the words each part accepts. The gateway and the
// product service read the form with them (src/product/form-params.ts), the OpenAPI
// document (src/openapi/removebg-form.ts) describes them, and the library and the CLI
// take the same words as options. Imports nothing but the size tiers beside it.
// Decisions beyond the spec are recorded in docs/DECISIONS.md.
import { SIZES, type Size } from "./tiers.ts";

/** size: the tier rule and its names live in tiers.ts. */
export { SIZES, type Size };

/** channels: rgba (the cut-out) or alpha (the mask alone, as a greyscale PNG). */
export const CHANNELS = ["rgba", "alpha"] as const;
export type Channels = (typeof CHANNELS)[number];
/** type: accepted for compatibility; does not change the result. */
export const TYPES = ["product", "auto"] as const;
/** format: the result is always PNG. */
export const FORMATS = ["png", "auto"] as const;
/** Spellings read as true or false (semitransparency) or as false (crop), any case. */
export const TRUE_WORDS = ["true", "1", "yes", "on"] as const;
export const FALSE_WORDS = ["false", "0", "no", "off"] as const;
