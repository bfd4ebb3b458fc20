// Our int8 IS-Net, derived from the fp16 weights of the `medium` model: the graph made
// float32, then every Conv not kept in float rewritten as ONNX Runtime's dynamic
// quantisation does (the shape of the `small` model, the operators onnxruntime-web runs
// fastest on WebAssembly):
//
//   x ─ DynamicQuantizeLinear ─ x_q, x_scale, x_zero ─┐
//   W_q (uint8, offline)  ──────────────────────────── ConvInteger ─ Cast ─ Mul(x_scale·W_scale) ─ Add(bias)
//
// What differs from the `small` file is how W_q is made: one scale per output channel
// (each filter uses the full 8 bits) instead of one per tensor, and the layers whose
// error reaches the mask most directly (the finest decoder stage and the output head)
// left in float. ORT's ConvInteger takes only one weight zero point per tensor, so
// per-channel weights are symmetric (zero point 128, codes 1..255). The derivation is
// pure arithmetic on the package's bytes, so the same input gives the same file.
import { DataType, attrInt, parseModel, writeModel, type OnnxModel, type OnnxNode, type OnnxTensor } from "./onnx-graph.ts";
import { intField } from "./onnx-wire.ts";

export interface QuantiseOptions {
  /** One weight scale per output channel, or one per tensor. */
  scales: "per-channel" | "per-tensor";
  /** Symmetric weights (zero point 128) or asymmetric (per-tensor only: min..max mapped to 0..255). */
  symmetric: boolean;
  /** Conv nodes whose name starts with one of these stay in float32. */
  keepFloat: readonly string[];
}

// --- fp16 → fp32 ---

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

export function tensorValues(t: OnnxTensor): Float32Array {
  const view = new DataView(t.raw.buffer, t.raw.byteOffset, t.raw.byteLength);
  if (t.dataType === DataType.FLOAT) {
    const out = new Float32Array(t.raw.byteLength / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
    return out;
  }
  if (t.dataType === DataType.FLOAT16) {
    const out = new Float32Array(t.raw.byteLength / 2);
    for (let i = 0; i < out.length; i++) out[i] = halfToFloat(view.getUint16(i * 2, true));
    return out;
  }
  throw new Error(`tensor ${t.name}: data type ${t.dataType} is not float`);
}

/** A float32 initializer, its raw data little-endian as ONNX stores it. */
export function floatTensor(name: string, dims: number[], values: ArrayLike<number>): OnnxTensor {
  const f = Float32Array.from(values);
  const raw = new Uint8Array(f.length * 4);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < f.length; i++) view.setFloat32(i * 4, f[i]!, true);
  return { name, dims, dataType: DataType.FLOAT, raw };
}

const byteTensor = (name: string, dims: number[], values: Uint8Array): OnnxTensor => ({ name, dims, dataType: DataType.UINT8, raw: values });

/**
 * The fp16 graph as float32: initializers widened, casts to fp16 turned into casts to
 * float (no-ops ORT removes), and the fp16 value_info annotations dropped.
 */
export function toFloat32(model: OnnxModel): void {
  model.initializers = model.initializers.map((t) => (t.dataType === DataType.FLOAT16 ? floatTensor(t.name, t.dims, tensorValues(t)) : t));
  for (const n of model.nodes) {
    if (n.opType !== "Cast" || attrInt(n, "to") !== DataType.FLOAT16) continue;
    const to = n.attributes.find((a) => a.name === "to")!;
    to.fields = to.fields.map((f) => (f.no === 3 ? intField(3, DataType.FLOAT) : f));
  }
  model.graphFields = model.graphFields.filter((f) => f.no !== 13); // value_info
}

// --- weights ---

export interface QuantisedWeights {
  codes: Uint8Array;
  /** One per output channel, or one. */
  scales: Float32Array;
  zeroPoint: number;
}

/** Quantises a [C_out, ...] weight tensor to uint8 codes. */
export function quantiseWeights(w: Float32Array, outChannels: number, opts: Pick<QuantiseOptions, "scales" | "symmetric">): QuantisedWeights {
  const perChannel = opts.scales === "per-channel";
  if (perChannel && !opts.symmetric) throw new Error("per-channel weights must be symmetric: ConvInteger takes one weight zero point");
  const groups = perChannel ? outChannels : 1;
  const size = w.length / groups;
  const codes = new Uint8Array(w.length);
  const scales = new Float32Array(groups);
  let zeroPoint = 128;
  if (!opts.symmetric) {
    let lo = 0;
    let hi = 0;
    for (const v of w) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    const scale = Math.fround((hi - lo) / 255) || 1;
    zeroPoint = Math.min(255, Math.max(0, Math.round(-lo / scale)));
    scales[0] = scale;
    for (let i = 0; i < w.length; i++) codes[i] = Math.min(255, Math.max(0, Math.round(w[i]! / scale) + zeroPoint));
    return { codes, scales, zeroPoint };
  }
  for (let g = 0; g < groups; g++) {
    let amax = 0;
    for (let i = g * size; i < (g + 1) * size; i++) amax = Math.max(amax, Math.abs(w[i]!));
    const scale = Math.fround(amax / 127) || 1;
    scales[g] = scale;
    for (let i = g * size; i < (g + 1) * size; i++) codes[i] = Math.min(255, Math.max(1, Math.round(w[i]! / scale) + 128));
  }
  return { codes, scales, zeroPoint };
}

// --- the graph rewrite ---

export function onnxNode(opType: string, name: string, inputs: string[], outputs: string[], attributes: OnnxNode["attributes"] = []): OnnxNode {
  return { opType, name, domain: "", inputs, outputs, attributes };
}

/** Rewrites the model's Conv nodes (except those kept in float) as dynamically quantised convolutions. */
export function quantiseConvs(model: OnnxModel, opts: QuantiseOptions): { quantised: number; float: number } {
  const inits = new Map(model.initializers.map((t) => [t.name, t]));
  const drop = new Set<string>();
  const added: OnnxTensor[] = [];
  const quantisedInputs = new Map<string, [string, string, string]>(); // activation → its DynamicQuantizeLinear outputs
  const nodes: OnnxNode[] = [];
  let quantised = 0;
  let float = 0;
  for (const n of model.nodes) {
    if (n.opType !== "Conv" || opts.keepFloat.some((p) => n.name.startsWith(p))) {
      if (n.opType === "Conv") float++;
      nodes.push(n);
      continue;
    }
    const [x, wName, bName] = n.inputs as [string, string, string | undefined];
    const wt = inits.get(wName);
    if (!wt) throw new Error(`Conv ${n.name}: weight ${wName} is not an initializer`);
    const outC = wt.dims[0]!;
    const q = quantiseWeights(tensorValues(wt), outC, opts);
    drop.add(wName);
    const base = n.name || n.outputs[0]!;
    added.push(byteTensor(`${wName}_q`, wt.dims, q.codes), byteTensor(`${wName}_zero`, [], Uint8Array.of(q.zeroPoint)));
    const scaleDims = q.scales.length === 1 ? [] : [q.scales.length, 1, 1];
    added.push(floatTensor(`${wName}_scale`, scaleDims, q.scales));

    let xq = quantisedInputs.get(x);
    if (!xq) {
      xq = [`${x}_dq`, `${x}_dq_scale`, `${x}_dq_zero`];
      quantisedInputs.set(x, xq);
      nodes.push(onnxNode("DynamicQuantizeLinear", `${x}_quantise`, [x], [...xq]));
    }
    const y = n.outputs[0]!;
    const convAttrs = n.attributes;
    nodes.push(onnxNode("ConvInteger", `${base}_int`, [xq[0], `${wName}_q`, xq[2], `${wName}_zero`], [`${y}_i32`], convAttrs));
    nodes.push(onnxNode("Cast", `${base}_cast`, [`${y}_i32`], [`${y}_f32`], [{ name: "to", fields: [{ no: 1, type: 2, bytes: new TextEncoder().encode("to") }, intField(3, DataType.FLOAT), intField(20, 2)] }]));
    nodes.push(onnxNode("Mul", `${base}_scales`, [xq[1], `${wName}_scale`], [`${y}_xw_scale`]));
    if (bName) {
      nodes.push(onnxNode("Mul", `${base}_rescale`, [`${y}_f32`, `${y}_xw_scale`], [`${y}_unbiased`]));
      const bt = inits.get(bName)!;
      drop.add(bName);
      added.push(floatTensor(`${bName}_c11`, [bt.dims[0]!, 1, 1], tensorValues(bt)));
      nodes.push(onnxNode("Add", `${base}_bias`, [`${y}_unbiased`, `${bName}_c11`], [y]));
    } else {
      nodes.push(onnxNode("Mul", `${base}_rescale`, [`${y}_f32`, `${y}_xw_scale`], [y]));
    }
    quantised++;
  }
  model.nodes = nodes;
  // A weight shared with a float Conv must stay.
  for (const n of nodes) for (const i of n.inputs) drop.delete(i);
  model.initializers = [...model.initializers.filter((t) => !drop.has(t.name)), ...added];
  return { quantised, float };
}

/** The whole derivation: fp16 model bytes in, int8 model bytes out. */
export function deriveQuantisedModel(fp16: Uint8Array, opts: QuantiseOptions): { bytes: Uint8Array; quantised: number; float: number } {
  const model = parseModel(fp16);
  toFloat32(model);
  const counts = quantiseConvs(model, opts);
  return { bytes: writeModel(model), ...counts };
}
