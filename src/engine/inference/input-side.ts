// The size the model is fed for one picture: the rule, in one place.
//
// The model's own size (1024² for IS-Net), whatever the picture, unless the caller asks
// for another square side the model takes (its `sizes`). Measured with `npm run bench:quality --
// --sizes …` (docs/MODEL.md, "The input size"): on our composites and whole photos no
// smaller side kept the masks within the bound we hold the default to (mean IoU within
// 0.001 of 1024's, SAD within 3 %, and the whole photos' masks close to 1024's), not even
// for the smallest pictures, so shrinking is the caller's trade of quality for time, never
// the default. A model whose graph takes only its own size (no `sizes` in its manifest
// entry) always gets that size.
import type { BoundModel } from "./model-card.ts";
import type { InputSize } from "./session.ts";

export interface SizedModel {
  inputSize: InputSize;
  sizes?: BoundModel["sizes"];
}

/** The input for a picture: the model's own size, or `askedSide`² when given (the session checks the model takes it). */
export function modelInputSize(model: SizedModel, askedSide?: number): InputSize {
  return askedSide === undefined ? model.inputSize : { width: askedSide, height: askedSide };
}
