// Pre- and post-processing between image bytes and model tensors. Pure functions, so
// they are tested without a model and shared by every backend.
import { CARD_DEFAULTS, type ModelCard } from "./model-card.ts";

type Triple = readonly [number, number, number];

/** What the input tensor's making reads from a card (model-card.ts); absent fields take the card's defaults. */
export type InputContract = Pick<ModelCard, "mean" | "std"> & Partial<Pick<ModelCard, "layout" | "channels" | "scale">>;

/**
 * Interleaved RGB bytes (row-major, 3 bytes per pixel) to a float32 tensor, planar
 * [1, 3, H, W] (NCHW) or interleaved [1, H, W, 3] (NHWC), channels in the card's order,
 * each value (x / scale - mean) / std with mean and std in that order. A 256-entry table
 * per channel replaces the division in the 3-million-element loop. `out`: where to write
 * it (a caller's buffer kept from run to run), else a new array.
 */
export function rgbToTensor(rgb: Uint8Array, width: number, height: number, c: InputContract, out = new Float32Array(width * height * 3)): Float32Array {
  const plane = width * height;
  if (rgb.length !== plane * 3) {
    throw new RangeError(`expected ${plane * 3} RGB bytes for ${width}x${height}, got ${rgb.length}`);
  }
  if (out.length !== plane * 3) throw new RangeError(`expected room for ${plane * 3} values, got ${out.length}`);
  const divisor = inputDivisor(rgb, c.scale);
  const tables = [0, 1, 2].map((ch) => {
    const t = new Float32Array(256);
    for (let v = 0; v < 256; v++) t[v] = (v / divisor - c.mean[ch]!) / c.std[ch]!;
    return t;
  });
  // Tensor channel k reads source byte src[k] of each RGB pixel.
  const src = (c.channels ?? CARD_DEFAULTS.channels) === "BGR" ? [2, 1, 0] : [0, 1, 2];
  const [t0, t1, t2] = tables as [Float32Array, Float32Array, Float32Array];
  const [s0, s1, s2] = src as [number, number, number];
  if ((c.layout ?? "NCHW") === "NHWC") {
    for (let j = 0; j < plane * 3; j += 3) {
      out[j] = t0[rgb[j + s0]!]!;
      out[j + 1] = t1[rgb[j + s1]!]!;
      out[j + 2] = t2[rgb[j + s2]!]!;
    }
    return out;
  }
  for (let i = 0, j = 0; i < plane; i++, j += 3) {
    out[i] = t0[rgb[j + s0]!]!;
    out[plane + i] = t1[rgb[j + s1]!]!;
    out[2 * plane + i] = t2[rgb[j + s2]!]!;
  }
  return out;
}

/**
 * What each byte is divided by before mean and std: 255, or for scale "max" the picture's
 * own largest value, as U²-Net's loader divides by (an all-black picture keeps 255).
 */
export function inputDivisor(rgb: Uint8Array, scale: ModelCard["scale"] | undefined): number {
  if ((scale ?? CARD_DEFAULTS.scale) !== "max") return 255;
  let max = 0;
  for (let i = 0; i < rgb.length; i++) if (rgb[i]! > max) max = rgb[i]!;
  return max || 255;
}

/** rgbToTensor for an RGB, NCHW, divide-by-255 contract. */
export function rgbToNchw(rgb: Uint8Array, width: number, height: number, mean: Triple, std: Triple, out = new Float32Array(width * height * 3)): Float32Array {
  return rgbToTensor(rgb, width, height, { mean: mean as ModelCard["mean"], std: std as ModelCard["std"] }, out);
}

/**
 * The model's single-channel output to 0..255 bytes, after the card's activation:
 * "sigmoid" maps logits to probabilities; "auto" does so only when a value lies outside
 * [0, 1] (as transformers.js decides), since a probability map never does.
 * "clamp": values are probabilities already (IS-Net ends in a sigmoid); clamp and scale.
 * "minmax": stretch to the mask's own min..max, as the IS-Net authors' demo script does;
 * a flat output (max = min) becomes all zeros rather than dividing by zero.
 */
export function outputToMask(values: ArrayLike<number>, mode: "clamp" | "minmax", activation: ModelCard["activation"] = CARD_DEFAULTS.activation): Uint8Array {
  if (activation === "sigmoid" || (activation === "auto" && outsideUnit(values))) values = sigmoid(values);
  const n = values.length;
  const mask = new Uint8Array(n);
  let lo = 0;
  let scale = 255;
  if (mode === "minmax") {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v < min) min = v;
      if (v > max) max = v;
    }
    if (!(max > min)) return mask;
    lo = min;
    scale = 255 / (max - min);
  }
  for (let i = 0; i < n; i++) {
    const v = (values[i] - lo) * scale;
    // NaN fails both comparisons and lands on 0.
    mask[i] = v >= 255 ? 255 : v > 0 ? Math.round(v) : 0;
  }
  return mask;
}

function outsideUnit(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) if (values[i]! < 0 || values[i]! > 1) return true;
  return false;
}

function sigmoid(values: ArrayLike<number>): Float32Array {
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = 1 / (1 + Math.exp(-values[i]!));
  return out;
}
