// Pre- and post-processing between image bytes and model tensors. Pure functions, so
// they are tested without a model and shared by every backend.

type Triple = readonly [number, number, number];

/**
 * Interleaved RGB bytes (row-major, 3 bytes per pixel) to a planar float32 tensor
 * [1, 3, H, W] with (x / 255 - mean) / std per channel. A 256-entry table per channel
 * replaces the division in the 3-million-element loop. `out`: where to write it (a
 * caller's buffer kept from run to run), else a new array.
 */
export function rgbToNchw(rgb: Uint8Array, width: number, height: number, mean: Triple, std: Triple, out = new Float32Array(width * height * 3)): Float32Array {
  const plane = width * height;
  if (rgb.length !== plane * 3) {
    throw new RangeError(`expected ${plane * 3} RGB bytes for ${width}x${height}, got ${rgb.length}`);
  }
  const tables = [0, 1, 2].map((c) => {
    const t = new Float32Array(256);
    for (let v = 0; v < 256; v++) t[v] = (v / 255 - mean[c]) / std[c];
    return t;
  });
  if (out.length !== plane * 3) throw new RangeError(`expected room for ${plane * 3} values, got ${out.length}`);
  const [r, g, b] = tables as [Float32Array, Float32Array, Float32Array];
  for (let i = 0, j = 0; i < plane; i++, j += 3) {
    out[i] = r[rgb[j]];
    out[plane + i] = g[rgb[j + 1]];
    out[2 * plane + i] = b[rgb[j + 2]];
  }
  return out;
}

/**
 * The model's single-channel output to 0..255 bytes.
 * "clamp": values are probabilities already (IS-Net ends in a sigmoid); clamp and scale.
 * "minmax": stretch to the mask's own min..max, as the IS-Net authors' demo script does;
 * a flat output (max = min) becomes all zeros rather than dividing by zero.
 */
export function outputToMask(values: ArrayLike<number>, mode: "clamp" | "minmax"): Uint8Array {
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
