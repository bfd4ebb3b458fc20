// Static quantisation of the fp16 IS-Net: activation ranges fixed beforehand (by a
// calibration run over our photos, quantise-calibrate.ts), written as ONNX QDQ pairs that
// ONNX Runtime fuses into integer operators when it loads the file:
//
//   x ─ QuantizeLinear ─ DequantizeLinear ─┐
//   W (int8, per output channel) ─ DequantizeLinear ── Conv ─ Relu ─ QuantizeLinear ─ DequantizeLinear ─ …
//   B (int32, scale x·w) ─ DequantizeLinear ─┘
//
// becomes QLinearConv (NHWC) with the ReLU folded into its requantisation, and the
// MaxPool, Resize, Concat and Add between convolutions run on uint8 as well, so the
// activations stay 8-bit from one convolution to the next instead of being re-scanned and
// re-quantised before each (the dynamic form in quantise.ts). Each quantised tensor gets
// its own asymmetric uint8 scale from its calibrated range; MaxPool and Resize outputs
// reuse their input's (ORT runs them on uint8 only then). Weights are int8, symmetric, one
// scale per output channel. Pure arithmetic on the bytes and the ranges: same in, same out.
import { DataType, attrInt, parseModel, writeModel, type OnnxModel, type OnnxNode, type OnnxTensor } from "./onnx-graph.ts";
import { fieldString, intField, msgField, readFields, strField } from "./onnx-wire.ts";
import { floatTensor, onnxNode, quantiseWeights, tensorValues, toFloat32 } from "./quantise.ts";

/** Per tensor: [low, high] of the values it takes on the calibration photos. */
export type ActivationRanges = Record<string, readonly [number, number]>;

export interface StaticGraph {
  /** The float32 graph, fp16 leftovers removed, nodes in topological order. */
  model: OnnxModel;
  /** Activation tensors that get a Q/DQ pair, in graph order. */
  quantised: string[];
  keepFloat: readonly string[];
}

const valueInfoName = (bytes: Uint8Array) => fieldString(readFields(bytes).find((f) => f.no === 1)!);
const ELEMENTWISE = new Set(["Conv", "Relu", "MaxPool", "Resize", "Add", "Sigmoid", "Cast", "Concat"]);

/**
 * The fp16 model as a float32 graph ready for static quantisation, and the tensors to
 * quantise: every float activation read by a quantised operator, except a convolution's
 * output read only by its ReLU (folded), tensors read only by the output sigmoids, graph
 * outputs, and tensors wholly inside the float region (`keepFloat` name prefixes).
 */
export function prepareStatic(fp16: Uint8Array, keepFloat: readonly string[]): StaticGraph {
  const model = parseModel(fp16);
  toFloat32(model);
  const inputs = model.graphFields.filter((f) => f.no === 11).map((f) => valueInfoName(f.bytes!));
  const outputs = new Set(model.graphFields.filter((f) => f.no === 12).map((f) => valueInfoName(f.bytes!)));
  // toFloat32 left the fp16 converter's casts as float → float casts: drop them (renaming
  // their readers), except those that produce a graph output.
  const rename = new Map<string, string>();
  for (const n of model.nodes) {
    if (n.opType === "Cast" && attrInt(n, "to") === DataType.FLOAT && !outputs.has(n.outputs[0]!)) rename.set(n.outputs[0]!, n.inputs[0]!);
  }
  const resolve = (t: string): string => (rename.has(t) ? resolve(rename.get(t)!) : t);
  let pending = model.nodes.filter((n) => !rename.has(n.outputs[0]!)).map((n) => ({ ...n, inputs: n.inputs.map((i) => (i ? resolve(i) : i)) }));
  // The converter appended its casts at the end of the node list: restore topological order.
  const ready = new Set<string>(["", ...inputs, ...model.initializers.map((t) => t.name)]);
  for (const f of model.otherInitializers) ready.add(fieldString(readFields(f.bytes!).find((x) => x.no === 8)!));
  const nodes: OnnxNode[] = [];
  while (pending.length) {
    const later = pending.filter((n) => {
      if (!n.inputs.every((i) => ready.has(i))) return true;
      nodes.push(n);
      n.outputs.forEach((o) => ready.add(o));
      return false;
    });
    if (later.length === pending.length) throw new Error(`graph has a cycle or a missing input at ${later[0]!.name}`);
    pending = later;
  }
  model.nodes = nodes;

  const isFloat = (n: OnnxNode) => keepFloat.some((p) => n.name.startsWith(p));
  const activations = new Set(inputs);
  for (const n of nodes) if (ELEMENTWISE.has(n.opType) && activations.has(n.inputs[0]!)) n.outputs.forEach((o) => activations.add(o));
  const producer = new Map(nodes.flatMap((n) => n.outputs.map((o) => [o, n] as const)));
  const readers = new Map<string, OnnxNode[]>();
  for (const n of nodes) for (const i of n.inputs) if (n.opType !== "Shape") readers.set(i, [...(readers.get(i) ?? []), n]);
  const wanted = (t: string): boolean => {
    const p = producer.get(t);
    const rs = readers.get(t) ?? [];
    if (!activations.has(t) || outputs.has(t) || rs.length === 0) return false;
    if (p?.opType === "Conv" && rs.every((r) => r.opType === "Relu")) return false;
    if (rs.every((r) => r.opType === "Sigmoid" || r.opType === "Cast")) return false;
    return !((p ? isFloat(p) : true) && rs.every(isFloat)); // a graph input has no quantised producer
  };
  return { model, quantised: [...inputs, ...nodes.flatMap((n) => n.outputs)].filter(wanted), keepFloat };
}

/** The graph with the given tensors as extra float outputs, for a calibration run. */
export function calibrationModel(g: StaticGraph, tensors: readonly string[]): Uint8Array {
  const extra = tensors.map((t) => msgField(12, [strField(1, t), msgField(2, [msgField(1, [intField(1, DataType.FLOAT)])])]));
  return writeModel({ ...g.model, graphFields: [...g.model.graphFields, ...extra] });
}

interface QParams {
  scale: number;
  zero: number;
}

/** Asymmetric uint8 parameters for [lo, hi] (widened to hold 0, so zero is exact). */
export function rangeParams(lo: number, hi: number): QParams {
  const a = Math.min(0, lo);
  const b = Math.max(0, hi, a + 1e-6);
  const scale = Math.fround((b - a) / 255);
  return { scale, zero: Math.min(255, Math.max(0, Math.round(-a / scale))) };
}

/** ONNX raw data is little-endian whatever the host's byte order; a bias past int32 is clamped, not wrapped. */
function int32Raw(values: readonly number[]): Uint8Array {
  const raw = new Uint8Array(4 * values.length);
  const view = new DataView(raw.buffer);
  values.forEach((v, i) => view.setInt32(4 * i, Math.max(-0x80000000, Math.min(0x7fffffff, v)), true));
  return raw;
}

const axis0 = [{ name: "axis", fields: [strField(1, "axis"), intField(3, 0), intField(20, 2)] }];

/** Rewrites the prepared graph into QDQ form with the given ranges. */
export function quantiseStatic(g: StaticGraph, ranges: ActivationRanges): { bytes: Uint8Array; quantised: number; float: number } {
  const model = g.model;
  const inits = new Map(model.initializers.map((t) => [t.name, t]));
  const toQuantise = new Set(g.quantised);
  const params = new Map<string, QParams>();
  const dequantised = new Map<string, string>();
  const added: OnnxTensor[] = [];
  const out: OnnxNode[] = [];
  const producer = new Map(model.nodes.flatMap((n) => n.outputs.map((o) => [o, n] as const)));
  const isFloat = (n: OnnxNode) => g.keepFloat.some((p) => n.name.startsWith(p));

  const addPair = (t: string) => {
    const p = producer.get(t);
    const passOn = p && (p.opType === "MaxPool" || p.opType === "Resize") ? params.get(p.inputs[0]!) : undefined;
    const r = ranges[t];
    if (!passOn && !r) throw new Error(`no calibrated range for tensor ${t}`);
    const q = passOn ?? rangeParams(r![0], r![1]);
    params.set(t, q);
    added.push(floatTensor(`${t}_qscale`, [], [q.scale]), { name: `${t}_qzero`, dims: [], dataType: DataType.UINT8, raw: Uint8Array.of(q.zero) });
    out.push(
      onnxNode("QuantizeLinear", `${t}_quantise`, [t, `${t}_qscale`, `${t}_qzero`], [`${t}_q`]),
      onnxNode("DequantizeLinear", `${t}_dequantise`, [`${t}_q`, `${t}_qscale`, `${t}_qzero`], [`${t}_dq`]),
    );
    dequantised.set(t, `${t}_dq`);
  };

  for (const t of g.quantised) if (!producer.has(t)) addPair(t); // graph inputs
  const drop = new Set<string>();
  let quantised = 0;
  let float = 0;
  for (const n0 of model.nodes) {
    const reads = n0.inputs.map((i) => (n0.opType === "Shape" ? i : (dequantised.get(i) ?? i)));
    const n = { ...n0, inputs: reads };
    const x = n0.inputs[0]!;
    if (n.opType === "Conv" && !isFloat(n) && params.has(x)) {
      const [, wName, bName] = n0.inputs as [string, string, string | undefined];
      const wt = inits.get(wName);
      if (!wt) throw new Error(`Conv ${n.name}: weight ${wName} is not an initializer`);
      const w = quantiseWeights(tensorValues(wt), wt.dims[0]!, { scales: "per-channel", symmetric: true });
      const channels = w.scales.length;
      drop.add(wName);
      added.push(
        { name: `${wName}_s8`, dims: wt.dims, dataType: DataType.INT8, raw: Uint8Array.from(w.codes, (c) => (c - 128) & 255) },
        floatTensor(`${wName}_wscale`, [channels], w.scales),
        { name: `${wName}_wzero`, dims: [channels], dataType: DataType.INT8, raw: new Uint8Array(channels) },
      );
      out.push(onnxNode("DequantizeLinear", `${wName}_dequantise`, [`${wName}_s8`, `${wName}_wscale`, `${wName}_wzero`], [`${wName}_dqw`], axis0));
      n.inputs = [reads[0]!, `${wName}_dqw`];
      if (bName) {
        const b = tensorValues(inits.get(bName)!);
        const bs = Array.from(w.scales, (s) => Math.fround(s * params.get(x)!.scale));
        drop.add(bName);
        added.push(
          { name: `${bName}_s32`, dims: [b.length], dataType: DataType.INT32, raw: int32Raw(Array.from(b, (v, i) => Math.round(v / bs[i]!))) },
          floatTensor(`${bName}_bscale`, [b.length], bs),
          { name: `${bName}_bzero`, dims: [b.length], dataType: DataType.INT32, raw: new Uint8Array(4 * b.length) },
        );
        out.push(onnxNode("DequantizeLinear", `${bName}_dequantise`, [`${bName}_s32`, `${bName}_bscale`, `${bName}_bzero`], [`${bName}_dqb`], axis0));
        n.inputs.push(`${bName}_dqb`);
      }
      quantised++;
    } else if (n.opType === "Conv") float++;
    out.push(n);
    for (const o of n.outputs) if (toQuantise.has(o)) addPair(o);
  }
  for (const n of out) for (const i of n.inputs) drop.delete(i);
  const bytes = writeModel({ ...model, nodes: out, initializers: [...model.initializers.filter((t) => !drop.has(t.name)), ...added] });
  return { bytes, quantised, float };
}
