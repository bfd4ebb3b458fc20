// float32 → IEEE float16, as ONNX stores a float16 tensor (raw_data, little-endian).
import { DataType, type OnnxTensor } from "./onnx-graph.ts";

/** IEEE half from a float, rounded to nearest even (magnitudes past the range become infinity). */
const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

export function toHalf(value: number): number {
  scratch[0] = value;
  const x = scratchBits[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && half & 1) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
}

/** A float16 initializer of `values`, rounded to nearest even. */
export function toHalfTensor(name: string, dims: number[], values: ArrayLike<number>): OnnxTensor {
  const raw = new Uint8Array(values.length * 2);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < values.length; i++) view.setUint16(i * 2, toHalf(values[i]!), true);
  return { name, dims, dataType: DataType.FLOAT16, raw };
}
