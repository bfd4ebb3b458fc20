// The size the model is fed for one picture: the rule, in one place.
//
// IS-Net was trained on pictures stretched to 1024², and a picture much smaller than that
// is upsampled before the model sees it, which adds no detail the model can use. Measured
// with `npm run bench:quality -- --sizes …` (docs/MODEL.md, "The input size"): for
// pictures up to SMALL_PICTURE_SIDE on their longer side, an input of SMALL_INPUT_SIDE
// keeps the masks within the stated bounds of 1024's and costs a fraction of the time;
// larger pictures keep the model's full size, because a large scene read at a smaller
// scale loses what the model sees at full size. A model whose graph takes only its own
// size (no `sizes` in its manifest entry) is always fed that size.
import type { ModelEntry } from "./manifest.ts";
import type { InputSize } from "./session.ts";

/** Pictures up to this many pixels on their longer side count as small. */
export const SMALL_PICTURE_SIDE = 1024;
/** The square input side small pictures get, where the model takes it. */
export const SMALL_INPUT_SIDE = 896;

export interface SizedModel {
  inputSize: InputSize;
  sizes?: ModelEntry["sizes"];
}

/** The input for an upright picture of `picture`'s size. */
export function modelInputSize(model: SizedModel, picture: InputSize): InputSize {
  const s = model.sizes;
  if (!s) return model.inputSize;
  const small = Math.max(picture.width, picture.height) <= SMALL_PICTURE_SIDE;
  const side = small ? Math.min(Math.max(SMALL_INPUT_SIDE, s.min), s.max) : undefined;
  return side === undefined || side >= Math.min(model.inputSize.width, model.inputSize.height) ? model.inputSize : { width: side, height: side };
}
