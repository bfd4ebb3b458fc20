// Faster kernels for the two resizes every 12 MP request makes, with exactly the filter
// and rounding of resample.ts (same weights, same float32 steps, so the same bytes out;
// test/imaging/resample-fast.test.ts compares them with the general engine):
//  - an opaque image shrunk or grown to packed RGB (the model's input, or a preview):
//    alpha is known to be 255, so it is neither read nor filtered, and each pixel is
//    one 32-bit load instead of four byte loads;
//  - a one-channel mask grown to the output size: at most two taps per axis, so each
//    output row is one fused pass over two cached rows instead of clear, add, add, emit.
// Measured with bench/stages-12mp.ts (12 MP, CPU time): mask upscale about 95 → 65 ms, and
// to about 20 ms on the benchmark's mask once runs of 0 were filled rather than computed.
import { axisFilter, verticalPass, type AxisFilter, type RowRange } from "./resample.ts";

/** Packed 32-bit pixels of RGBA bytes; byte order of the platform (little-endian everywhere we run). */
function pixelWords(data: Uint8Array | Uint8ClampedArray): Uint32Array {
  if (data.byteOffset % 4 === 0) return new Uint32Array(data.buffer, data.byteOffset, data.length >> 2);
  return new Uint32Array(data.slice().buffer); // unaligned view: copy once
}

/** Whether a 32-bit word of RGBA bytes has alpha in its high byte: every platform we run on (checked where it matters). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

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
 * Output columns per block of growMaskRows: a block whose two source rows are all 0 there
 * is filled with 0 rather than computed (0 weighted is 0, rounded down to 0: the same
 * bytes). Most of a cut-out's mask is background; at 12 MP this skipped about half of the
 * work on the benchmark's image.
 */
const MASK_BLOCK = 32;

/**
 * A one-channel mask grown on both axes, mw x mh to dw x dh, rounded to bytes as
 * resizeMask does (bilinear between pixel centres, edges clamped): the rows `band` of
 * the result, written into `out` (all dw * dh of it).
 */
export function growMaskRows(mask: Uint8Array, mw: number, mh: number, dw: number, dh: number, out: Uint8Array, band: RowRange): void {
  const fx = axisFilter(mw, dw);
  const fy = axisFilter(mh, dh);
  if (fx.maxTaps !== 2 || fy.maxTaps !== 2) throw new RangeError("growMaskRows only grows");
  const blocks = Math.ceil(dw / MASK_BLOCK);
  // Every source row grown horizontally once, two at a time in a ring, with a flag per
  // block: 1 when any of its values is not 0.
  const rows = [new Float32Array(dw), new Float32Array(dw)];
  const live = [new Uint8Array(blocks), new Uint8Array(blocks)];
  const rowOf = [-1, -1];
  // The source columns each block reads: a block whose source span is all 0 is 0.
  const spanFirst = new Int32Array(blocks), spanLast = new Int32Array(blocks);
  for (let k = 0; k < blocks; k++) {
    const x0 = k * MASK_BLOCK, x1 = Math.min(dw, x0 + MASK_BLOCK) - 1;
    spanFirst[k] = fx.first[x0];
    spanLast[k] = fx.first[x1] + fx.taps[x1] - 1;
  }
  const grown = (r: number): number => {
    const slot = r & 1;
    if (rowOf[slot] === r) return slot;
    rowOf[slot] = r;
    const row = rows[slot], flags = live[slot];
    const s0 = r * mw;
    for (let k = 0; k < blocks; k++) {
      const x0 = k * MASK_BLOCK, x1 = Math.min(dw, x0 + MASK_BLOCK);
      let any = 0;
      for (let j = s0 + spanFirst[k], end = s0 + spanLast[k]; j <= end; j++) any |= mask[j];
      flags[k] = any === 0 ? 0 : 1;
      if (any === 0) {
        row.fill(0, x0, x1);
        continue;
      }
      for (let x = x0; x < x1; x++) {
        const j = s0 + fx.first[x];
        // Same sum as the general engine: one or two taps, in double, stored as float32.
        row[x] = fx.taps[x] === 2 ? mask[j] * fx.weights[2 * x] + mask[j + 1] * fx.weights[2 * x + 1] : mask[j] * fx.weights[2 * x];
      }
    }
    return slot;
  };
  const f32 = Math.fround;
  for (let y = band.y0; y < band.y1; y++) {
    const o = y * dw;
    const sa = grown(fy.first[y]);
    const a = rows[sa], la = live[sa];
    const wa = fy.weights[2 * y];
    const two = fy.taps[y] === 2;
    const sb = two ? grown(fy.first[y] + 1) : sa;
    const b = rows[sb], lb = live[sb];
    const wb = two ? fy.weights[2 * y + 1] : 0;
    for (let k = 0, x = 0; k < blocks; k++) {
      if (la[k] === 0 && lb[k] === 0) {
        // The whole run of such blocks in one fill.
        let k1 = k + 1;
        while (k1 < blocks && la[k1] === 0 && lb[k1] === 0) k1++;
        const x1 = Math.min(dw, k1 * MASK_BLOCK);
        out.fill(0, o + x, o + x1);
        x = x1;
        k = k1 - 1;
        continue;
      }
      const x1 = Math.min(dw, x + MASK_BLOCK);
      if (two) {
        // The general engine's float32 accumulator, step by step: fround(fround(a*wa) + b*wb).
        for (; x < x1; x++) out[o + x] = Math.min(255, f32(f32(a[x] * wa) + b[x] * wb) + 0.5);
      } else {
        for (; x < x1; x++) out[o + x] = Math.min(255, f32(a[x] * wa) + 0.5);
      }
    }
  }
}

