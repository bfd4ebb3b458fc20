// The one output format: 8-bit RGBA PNG (png-rgba.ts), here with every segment on this
// thread; the pipeline passes its helper threads instead (src/engine/pipeline/pipeline.ts).
import type { RGBA } from "./types.ts";
import { encodeRgbaPng } from "./png-rgba.ts";
import { inlineBands } from "./row-bands.ts";

/** 8-bit RGBA PNG. Throws RangeError only on a programming error (inconsistent size). */
export function encodePng(img: RGBA): Promise<Uint8Array> {
  return encodeRgbaPng(img, inlineBands);
}
