// The GPU form of a static int8 model (quantise-static.ts): the same weights and graph with
// nothing left that only ONNX Runtime's CPU provider runs.
//
//   x ─ QuantizeLinear ─ DequantizeLinear ─ Conv ─ …     becomes     x ─ Conv ─ …
//   W (int8) ─ DequantizeLinear ─┘                                    W' (float16) ─ Cast ─┘
//   B (int32) ─ DequantizeLinear ─┘                                   B' (float32) ─┘
//
// Why: the WebGPU provider has no integer convolution, so on a GPU every activation
// quantise/dequantise pair sent its tensor to the CPU and back (17× slower than
// WebAssembly on an H200). The weights keep their int8 values exactly (W' = (q - zero) ·
// scale), so the only difference from the CPU's mask is the activations' 8-bit rounding,
// which the GPU form no longer does. Weights are stored as float16 with a Cast to float32
// after them: half the file of float32 (a float16 holds q · scale to 11 significant bits,
// far finer than the int8 step), and ONNX Runtime folds a Cast of a constant into a float32
// initializer when it loads the graph, before it assigns nodes to providers, so no float16
// kernel runs (adapters without shader-f16 run it too). Biases stay float32 (they are small).
//
// The source must have no shape arithmetic (Shape → Slice → Concat feeding a Resize, as
// IS-Net's exporter traced it): ONNX Runtime places shape operators on the CPU, which would
// hand tensors back and forth between the devices. Our static model is size-free
// (size-free.ts: every Resize reads a constant scale), so there is none; a source with
// some is refused. Pure arithmetic on the bytes: same file in, same file out.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { DataType, attrInt, parseModel, writeModel, type OnnxNode, type OnnxTensor } from "./onnx-graph.ts";
import { floatTensor, tensorValues } from "./quantise.ts";
import { batchFree, castNode, halfActivations } from "./gpu-graph.ts";
import { toHalfTensor } from "./half-float.ts";

/** The integer values of an INT8, UINT8 or INT32 initializer. */
function integerValues(t: OnnxTensor): Int32Array {
  const view = new DataView(t.raw.buffer, t.raw.byteOffset, t.raw.byteLength);
  if (t.dataType === DataType.INT8) return Int32Array.from(new Int8Array(t.raw.buffer, t.raw.byteOffset, t.raw.length));
  if (t.dataType === DataType.UINT8) return Int32Array.from(t.raw);
  if (t.dataType === DataType.INT32) return Int32Array.from({ length: t.raw.length / 4 }, (_, i) => view.getInt32(i * 4, true));
  throw new Error(`tensor ${t.name}: data type ${t.dataType} is not an integer type this reads`);
}

/** (q - zero) · scale, with one scale (and zero) per slice along `axis` when they are vectors. */
function dequantise(q: OnnxTensor, scale: OnnxTensor, zero: OnnxTensor | undefined, axis: number): Float32Array {
  const codes = integerValues(q);
  const scales = tensorValues(scale);
  const zeros = zero ? integerValues(zero) : new Int32Array(scales.length);
  const a = axis < 0 ? axis + q.dims.length : axis;
  // Elements per step of the axis: the product of the dimensions after it.
  const inner = scales.length === 1 ? codes.length : q.dims.slice(a + 1).reduce((p, d) => p * d, 1);
  const out = new Float32Array(codes.length);
  for (let i = 0, c = 0; i < codes.length; i += inner, c = (c + 1) % scales.length) {
    const k = scales.length === 1 ? 0 : c;
    for (let j = i; j < Math.min(i + inner, codes.length); j++) out[j] = (codes[j]! - zeros[k]!) * scales[k]!;
  }
  return out;
}


/** A GPU form's activations: float32 everywhere, or float16 for adapters with `shader-f16` (gpu-graph.ts). */
export type GpuActivations = "float32" | "float16";

/**
 * The GPU form's bytes from the static int8 model's bytes; counts of what it rewrote. Every
 * form takes a batch of pictures (gpu-graph.ts, batchFree); "float16" activations keep the
 * weights' float16 as they are stored and drop their Casts (halfActivations).
 */
export function dequantiseToFloat(int8Static: Uint8Array, activations: GpuActivations = "float32"): { bytes: Uint8Array; weights: number; pairs: number } {
  const model = parseModel(int8Static);
  const inits = new Map(model.initializers.map((t) => [t.name, t]));
  const producer = new Map(model.nodes.flatMap((n) => n.outputs.map((o) => [o, n] as const)));
  const rename = new Map<string, string>();
  const added: OnnxTensor[] = [];
  const nodes: OnnxNode[] = [];
  let weights = 0;
  let pairs = 0;
  for (const n of model.nodes) {
    if (n.opType === "DequantizeLinear" && inits.has(n.inputs[0]!)) {
      const [q, s, z] = n.inputs.map((i) => (i ? inits.get(i) : undefined));
      if (!s) throw new Error(`${n.name}: its scale is not an initializer`);
      const values = dequantise(q!, s, z, attrInt(n, "axis") ?? 1);
      const out = n.outputs[0]!;
      if (q!.dataType === DataType.INT32) added.push(floatTensor(out, q!.dims, values));
      else {
        added.push(toHalfTensor(`${out}_f16`, q!.dims, values));
        nodes.push(castNode(`${out}_cast`, `${out}_f16`, out, DataType.FLOAT));
      }
      weights++;
      continue;
    }
    // An activation pair: the dequantised tensor is read as the float one it came from.
    if (n.opType === "DequantizeLinear" && producer.get(n.inputs[0]!)?.opType === "QuantizeLinear") {
      rename.set(n.outputs[0]!, producer.get(n.inputs[0]!)!.inputs[0]!);
      pairs++;
      continue;
    }
    if (n.opType === "QuantizeLinear") continue;
    nodes.push(n);
  }
  for (const n of nodes) n.inputs = n.inputs.map((i) => rename.get(i) ?? i);
  const shape = nodes.find((n) => n.opType === "Shape");
  if (shape) throw new Error(`${shape.name}: the source computes shapes at run time; make it size-free first (derive.sizeFree)`);
  // Keep only what a remaining node reads (the int8 codes, scales and zero points go).
  const read = new Set(nodes.flatMap((n) => n.inputs));
  const form = { ...model, nodes, initializers: [...model.initializers, ...added].filter((t) => read.has(t.name)) };
  const left = nodes.find((n) => n.opType === "QuantizeLinear" || n.opType === "DequantizeLinear");
  if (left) throw new Error(`${left.name}: a ${left.opType} is left that is not a weight's or an activation pair's`);
  batchFree(form);
  if (activations === "float16") halfActivations(form);
  return { bytes: writeModel(form), weights, pairs };
}

/**
 * The GPU form of the static int8 model file at `path`, and its sha256. Read from the file
 * on disk, so it follows whatever bytes the static model has (and needs no data package).
 */
export async function gpuFormOfFile(path: string, activations: GpuActivations = "float32"): Promise<{ bytes: Uint8Array; sha256: string }> {
  const { bytes } = dequantiseToFloat(new Uint8Array(await readFile(path)), activations);
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}
