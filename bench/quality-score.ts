// Scores and composites for the model-quality bench (bench/quality.ts) and the model
// agreement test. Masks are 0..255 bytes, one per pixel.
import { boxBlur } from "../src/engine/imaging/box-blur.ts";
import type { RGBA } from "../src/engine/imaging/types.ts";

export interface MaskScore {
  /** Intersection over union of the foregrounds (alpha >= 0.5). */
  iou: number;
  /** Sum of absolute alpha differences (alpha in 0..1), in thousands, as matting papers report it. */
  sad: number;
  /** Mean squared alpha difference (alpha in 0..1), times 1000. */
  mse: number;
}

export function scoreMask(mask: Uint8Array, truth: Uint8Array): MaskScore {
  if (mask.length !== truth.length) throw new Error(`mask has ${mask.length} pixels, truth ${truth.length}`);
  let inter = 0;
  let union = 0;
  let sad = 0;
  let sq = 0;
  for (let i = 0; i < mask.length; i++) {
    const a = mask[i]! >= 128;
    const b = truth[i]! >= 128;
    if (a && b) inter++;
    if (a || b) union++;
    const d = (mask[i]! - truth[i]!) / 255;
    sad += Math.abs(d);
    sq += d * d;
  }
  return { iou: union === 0 ? 1 : inter / union, sad: sad / 1000, mse: (sq / mask.length) * 1000 };
}

/** Blurs each channel of an RGB(A) image with a box of the given radius, three passes (close to a Gaussian). */
export function blurImage(img: RGBA, radius: number): RGBA {
  const { width: w, height: h } = img;
  const out = new Uint8ClampedArray(img.data.length);
  const plane = new Float32Array(w * h);
  const tmp = new Float32Array(w * h);
  const res = new Float32Array(w * h);
  for (let c = 0; c < 4; c++) {
    for (let i = 0; i < w * h; i++) plane[i] = img.data[i * 4 + c]!;
    for (let pass = 0; pass < 3; pass++) {
      boxBlur(plane, w, h, radius, tmp, res);
      plane.set(res);
    }
    for (let i = 0; i < w * h; i++) out[i * 4 + c] = plane[i]!;
  }
  return { width: w, height: h, data: out };
}

/** The subject (its alpha) over a background of the same size: an exact-alpha composite. */
export function composite(subject: RGBA, alpha: Uint8Array, background: RGBA): RGBA {
  const { width: w, height: h } = subject;
  if (background.width !== w || background.height !== h) throw new Error("background must match the subject's size");
  const out = new Uint8ClampedArray(w * h * 4);
  for (let i = 0; i < w * h; i++) {
    const a = alpha[i]! / 255;
    for (let c = 0; c < 3; c++) out[i * 4 + c] = Math.round(a * subject.data[i * 4 + c]! + (1 - a) * background.data[i * 4 + c]!);
    out[i * 4 + 3] = 255;
  }
  return { width: w, height: h, data: out };
}
