// Separable resampling engine behind resize.ts. Each axis gets its own filter: when an
// axis shrinks, every output pixel is the area-weighted average of the source pixels
// its footprint covers (a box prefilter, so fine detail averages out instead of
// aliasing into moiré); when it grows, bilinear interpolation between pixel centres.
//
// Rows are filtered horizontally on demand into a small ring of float rows and then
// combined vertically, so memory stays at a few rows however large the image is.

/** Per output index: the first source index and its run of weights (summing to 1). */
export interface AxisFilter {
  first: Int32Array;
  taps: Int32Array;
  /** weights[i * maxTaps + k] belongs to source index first[i] + k. */
  weights: Float32Array;
  maxTaps: number;
}

export function axisFilter(srcLen: number, dstLen: number): AxisFilter {
  const first = new Int32Array(dstLen);
  const taps = new Int32Array(dstLen);
  if (dstLen < srcLen) {
    const scale = srcLen / dstLen;
    const maxTaps = Math.ceil(scale) + 1;
    const weights = new Float32Array(dstLen * maxTaps);
    for (let i = 0; i < dstLen; i++) {
      const a = i * scale;
      const b = Math.min(srcLen, (i + 1) * scale);
      const j0 = Math.floor(a);
      const j1 = Math.min(srcLen, Math.ceil(b));
      first[i] = j0;
      taps[i] = j1 - j0;
      for (let j = j0; j < j1; j++) {
        const overlap = Math.min(b, j + 1) - Math.max(a, j);
        weights[i * maxTaps + (j - j0)] = overlap / (b - a);
      }
    }
    return { first, taps, weights, maxTaps };
  }
  // Growing (or equal): bilinear between the two nearest source centres; pixel
  // centres are aligned ((i + 0.5) * src / dst - 0.5), edges clamp.
  const maxTaps = 2;
  const weights = new Float32Array(dstLen * maxTaps);
  const scale = srcLen / dstLen;
  for (let i = 0; i < dstLen; i++) {
    const c = (i + 0.5) * scale - 0.5;
    if (c <= 0 || srcLen === 1) {
      first[i] = 0;
      taps[i] = 1;
      weights[i * 2] = 1;
    } else if (c >= srcLen - 1) {
      first[i] = srcLen - 1;
      taps[i] = 1;
      weights[i * 2] = 1;
    } else {
      const j = Math.floor(c);
      const f = c - j;
      first[i] = j;
      taps[i] = 2;
      weights[i * 2] = 1 - f;
      weights[i * 2 + 1] = f;
    }
  }
  return { first, taps, weights, maxTaps };
}

export interface Plane {
  width: number;
  height: number;
  /** Interleaved channels, 8 bits each. */
  data: Uint8Array | Uint8ClampedArray;
  channels: 1 | 4;
}

/**
 * Resamples `src` to dw x dh and hands each finished output row (floats, interleaved
 * like the source) to `emit`. With `premultiply`, colour channels of 4-channel data
 * are weighted by alpha while filtering (the row then holds premultiplied colour),
 * so transparent pixels do not bleed their hidden colour into visible neighbours.
 */
export function resampleRows(
  src: Plane,
  dw: number,
  dh: number,
  premultiply: boolean,
  emit: (row: Float32Array, y: number) => void,
  rows: RowRange = { y0: 0, y1: dh },
): void {
  const C = src.channels;
  // One element type for every caller keeps the hot loops monomorphic.
  const bytes = new Uint8Array(src.data.buffer, src.data.byteOffset, src.data.length);
  const fx = axisFilter(src.width, dw);
  const filter = C === 1 ? filterRow1 : premultiply ? filterRow4Premultiplied : filterRow4;
  verticalPass(axisFilter(src.height, dh), rows, dw * C, (r, out, at) => filter(bytes, r * src.width * C, fx, dw, out, at), emit);
}

/** Output rows y0 ≤ y < y1: a band of the output, so two threads can each make one (row-bands.ts). */
export interface RowRange {
  y0: number;
  y1: number;
}

/**
 * The vertical half of every resize here: output row y is the weighted sum of the
 * source rows its taps name, each filtered horizontally once by `fillRow` (into
 * `out[at..at + rowLen)`) and kept in a ring of maxTaps + 1 rows, since consecutive
 * output rows share most of their source rows. Only the output rows of `rows` are made;
 * each depends on nothing but the source, so bands made apart give the same bytes.
 */
export function verticalPass(
  fy: AxisFilter,
  rows: RowRange,
  rowLen: number,
  fillRow: (r: number, out: Float32Array, at: number) => void,
  emit: (row: Float32Array, y: number) => void,
): void {
  const ring = fy.maxTaps + 1;
  const cache = new Float32Array(ring * rowLen);
  const cachedRow = new Int32Array(ring).fill(-1);
  const acc = new Float32Array(rowLen);
  for (let y = rows.y0; y < rows.y1; y++) {
    acc.fill(0);
    const j0 = fy.first[y];
    const w0 = y * fy.maxTaps;
    for (let k = 0; k < fy.taps[y]; k++) {
      const r = j0 + k;
      const slot = r % ring;
      const at = slot * rowLen;
      if (cachedRow[slot] !== r) {
        cachedRow[slot] = r;
        fillRow(r, cache, at);
      }
      const w = fy.weights[w0 + k];
      for (let i = 0; i < rowLen; i++) acc[i] += cache[at + i] * w;
    }
    emit(acc, y);
  }
}

/** Horizontal filter of one 1-channel row starting at src[s0] into out[at...]. */
function filterRow1(src: Uint8Array, s0: number, f: AxisFilter, dw: number, out: Float32Array, at: number): void {
  const { first, taps, weights, maxTaps } = f;
  for (let x = 0; x < dw; x++) {
    let v = 0;
    const j = s0 + first[x];
    const w0 = x * maxTaps;
    for (let k = 0; k < taps[x]; k++) v += src[j + k] * weights[w0 + k];
    out[at + x] = v;
  }
}

function filterRow4(src: Uint8Array, s0: number, f: AxisFilter, dw: number, out: Float32Array, at: number): void {
  const { first, taps, weights, maxTaps } = f;
  for (let x = 0, o = at; x < dw; x++, o += 4) {
    let r = 0, g = 0, b = 0, a = 0;
    let p = s0 + first[x] * 4;
    const w0 = x * maxTaps;
    for (let k = 0; k < taps[x]; k++, p += 4) {
      const w = weights[w0 + k];
      r += src[p] * w;
      g += src[p + 1] * w;
      b += src[p + 2] * w;
      a += src[p + 3] * w;
    }
    out[o] = r;
    out[o + 1] = g;
    out[o + 2] = b;
    out[o + 3] = a;
  }
}

/** As filterRow4, with colour weighted by alpha (premultiplied) on the way in. */
function filterRow4Premultiplied(src: Uint8Array, s0: number, f: AxisFilter, dw: number, out: Float32Array, at: number): void {
  const { first, taps, weights, maxTaps } = f;
  for (let x = 0, o = at; x < dw; x++, o += 4) {
    let r = 0, g = 0, b = 0, a = 0;
    let p = s0 + first[x] * 4;
    const w0 = x * maxTaps;
    for (let k = 0; k < taps[x]; k++, p += 4) {
      const alpha = src[p + 3];
      const w = weights[w0 + k];
      const wa = (w * alpha) / 255;
      r += src[p] * wa;
      g += src[p + 1] * wa;
      b += src[p + 2] * wa;
      a += alpha * w;
    }
    out[o] = r;
    out[o + 1] = g;
    out[o + 2] = b;
    out[o + 3] = a;
  }
}
