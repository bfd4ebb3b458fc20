// Calibration for the static int8 model (quantise-static.ts): the float graph runs over
// calibration inputs on onnxruntime-node with the tensors to quantise as extra outputs,
// and each tensor's range is taken from what it held: its exact min and max (tail 0, the
// default), or the tail and 1 − tail points of a strided sample, which narrows the scale
// by clipping rare values (graph inputs always keep their exact range). A development
// step: its output is a small JSON that the derivation reads, so no model runs at install.
import { importNativeOrt } from "../inference/backend-native.ts";
import type { ActivationRanges, StaticGraph } from "./quantise-static.ts";
import { calibrationModel } from "./quantise-static.ts";

export interface CalibrationOptions {
  /** Tensors fetched per session (bounds the memory the extra outputs take). */
  batch?: number;
  /** Fraction clipped at each end; 0 (the default): exact min and max. */
  tail?: number;
  threads?: number;
  /** The graph's input name and shape. */
  inputName: string;
  dims: readonly number[];
}

const SAMPLES_PER_TENSOR = 100_000;

export async function calibrateRanges(g: StaticGraph, inputs: readonly Float32Array[], opts: CalibrationOptions): Promise<ActivationRanges> {
  const ort = await importNativeOrt();
  const batch = opts.batch ?? 60;
  const tail = opts.tail ?? 0;
  const ranges: Record<string, [number, number]> = {};
  const fetched = g.quantised.filter((t) => t !== opts.inputName);
  if (g.quantised.includes(opts.inputName)) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const x of inputs) for (const v of x) (lo = Math.min(lo, v)), (hi = Math.max(hi, v));
    ranges[opts.inputName] = [lo, hi];
  }
  for (let at = 0; at < fetched.length; at += batch) {
    const names = fetched.slice(at, at + batch);
    const session = await ort.InferenceSession.create(calibrationModel(g, names), {
      intraOpNumThreads: opts.threads ?? 2,
      graphOptimizationLevel: "basic",
      logSeverityLevel: 3,
    });
    const samples = new Map<string, number[]>(names.map((n) => [n, []]));
    const extremes = new Map<string, [number, number]>(names.map((n) => [n, [Infinity, -Infinity]]));
    try {
      for (const x of inputs) {
        const out = await session.run({ [opts.inputName]: new ort.Tensor("float32", x, [...opts.dims]) }, names);
        for (const n of names) {
          const d = out[n]!.data as Float32Array;
          const step = Math.max(1, Math.floor(d.length / SAMPLES_PER_TENSOR));
          const s = samples.get(n)!;
          for (let i = 0; i < d.length; i += step) s.push(d[i]!);
          const e = extremes.get(n)!;
          for (const v of d) (e[0] = Math.min(e[0], v)), (e[1] = Math.max(e[1], v));
        }
      }
    } finally {
      await session.release();
    }
    for (const [n, s] of samples) {
      const sorted = Float32Array.from(s).sort();
      const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
      ranges[n] = tail > 0 ? [q(tail), q(1 - tail)] : extremes.get(n)!;
    }
  }
  return ranges;
}
