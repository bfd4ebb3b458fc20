// Faster kernels for the two resizes every 12 MP request makes, with exactly the filter
// and rounding of resample.ts (same weights, same float32 steps, so the same bytes out;
// test/imaging/resample-fast.test.ts compares them with the general engine):
//  - an opaque image shrunk or grown to packed RGB (the model's input, or a preview):
//    alpha is known to be 255, so it is neither read nor filtered, and each pixel is
//    one 32-bit load instead of four byte loads;
//  - a one-channel mask grown to the output size: at most two taps per axis, so each
//    output row is one fused pass over two cached rows instead of clear, add, add, emit.
// Measured with bench/stages-12mp.ts (12 MP, CPU time): mask upscale about 95 → 65 ms.
import { axisFilter, verticalPass, type AxisFilter, type RowRange } from "./resample.ts";

/** Packed 32-bit pixels of RGBA bytes; byte order of the platform (little-endian everywhere we run). */
function pixelWords(data: Uint8Array | Uint8ClampedArray): Uint32Array {
  if (data.byteOffset % 4 === 0) return new Uint32Array(data.buffer, data.byteOffset, data.length >> 2);
  return new Uint32Array(data.slice().buffer); // unaligned view: copy once
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Resamples an opaque RGBA image (every alpha 255) to dw x dh, handing each output row
 * (3 floats per pixel: r, g, b) to `emit`. Same values as resampleRows' colour channels.
 */
export function resampleOpaqueRows(
  src: { width: number; height: number; data: Uint8Array | Uint8ClampedArray },
  dw: number,
  dh: number,
  emit: (row: Float32Array, y: number) => void,
  rows: RowRange = { y0: 0, y1: dh },
): void {
  if (!LITTLE_ENDIAN) throw new Error("resampleOpaqueRows assumes a little-endian platform");
  const words = pixelWords(src.data);
  const fx = axisFilter(src.width, dw);
  verticalPass(axisFilter(src.height, dh), rows, dw * 3, (r, out, at) => opaqueRow(words, r * src.width, fx, dw, out, at), emit);
}

/** Horizontal filter of one opaque row (packed pixels from words[s0]) into r, g, b floats at out[at...]. */
function opaqueRow(words: Uint32Array, s0: number, f: AxisFilter, dw: number, out: Float32Array, at: number): void {
  const { first, taps, weights, maxTaps } = f;
  for (let x = 0, o = at; x < dw; x++, o += 3) {
    let cr = 0, cg = 0, cb = 0;
    let p = s0 + first[x];
    const t0 = x * maxTaps;
    for (let t = 0; t < taps[x]; t++, p++) {
      const v = words[p];
      const w = weights[t0 + t];
      cr += (v & 255) * w;
      cg += ((v >>> 8) & 255) * w;
      cb += ((v >>> 16) & 255) * w;
    }
    out[o] = cr;
    out[o + 1] = cg;
    out[o + 2] = cb;
  }
}

/** True when every pixel of RGBA bytes has alpha 255 (one 32-bit compare per pixel). */
export function isOpaque(data: Uint8Array | Uint8ClampedArray): boolean {
  const words = pixelWords(data);
  for (let i = 0; i < words.length; i++) if (words[i] < 0xff000000) return false;
  return true;
}

/**
 * A one-channel mask grown (or kept) on both axes, mw x mh to dw x dh, rounded to bytes
 * as resizeMask does: bilinear between pixel centres, edges clamped.
 */
export function growMask(mask: Uint8Array, mw: number, mh: number, dw: number, dh: number): Uint8Array {
  const out = new Uint8Array(dw * dh);
  growMaskRows(mask, mw, mh, dw, dh, out, { y0: 0, y1: dh });
  return out;
}

/** growMask's rows `rows` of the dw x dh result, written into `out` (all dw * dh of it). */
export function growMaskRows(mask: Uint8Array, mw: number, mh: number, dw: number, dh: number, out: Uint8Array, band: RowRange): void {
  const fx = axisFilter(mw, dw);
  const fy = axisFilter(mh, dh);
  if (fx.maxTaps !== 2 || fy.maxTaps !== 2) throw new RangeError("growMask only grows");
  // Every source row grown horizontally once, two at a time in a ring.
  const rows = [new Float32Array(dw), new Float32Array(dw)];
  const rowOf = [-1, -1];
  const grown = (r: number): Float32Array => {
    const slot = r & 1;
    const row = rows[slot];
    if (rowOf[slot] === r) return row;
    rowOf[slot] = r;
    const s0 = r * mw;
    for (let x = 0; x < dw; x++) {
      const j = s0 + fx.first[x];
      // Same sum as the general engine: one or two taps, in double, stored as float32.
      row[x] = fx.taps[x] === 2 ? mask[j] * fx.weights[2 * x] + mask[j + 1] * fx.weights[2 * x + 1] : mask[j] * fx.weights[2 * x];
    }
    return row;
  };
  const f32 = Math.fround;
  for (let y = band.y0; y < band.y1; y++) {
    const o = y * dw;
    const a = grown(fy.first[y]);
    const wa = fy.weights[2 * y];
    if (fy.taps[y] === 1) {
      for (let x = 0; x < dw; x++) out[o + x] = Math.min(255, f32(a[x] * wa) + 0.5);
      continue;
    }
    const b = grown(fy.first[y] + 1);
    const wb = fy.weights[2 * y + 1];
    // The general engine's float32 accumulator, step by step: fround(fround(a*wa) + b*wb).
    for (let x = 0; x < dw; x++) out[o + x] = Math.min(255, f32(f32(a[x] * wa) + b[x] * wb) + 0.5);
  }
}

