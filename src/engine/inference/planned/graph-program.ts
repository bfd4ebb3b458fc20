// The operators of a graph the planned WebGPU run takes (planned-runner.ts), read once from
// the ONNX file: IS-Net's and U²-Net's convolutions (any stride, dilation and padding, one
// group), their Relu folded into them, max-pooling, bilinear resize by constant scales,
// channel concatenation, addition and sigmoid. Constant Casts are folded (the GPU forms
// store weights as float16 behind a Cast); Casts of activations are no-ops, since every
// planned tensor is float32. A graph with anything else is refused with the reason, and
// onnxruntime-web's WebGPU provider runs it instead.
import { FLOAT, FLOAT16, floatValues, readOnnxGraph, type ReadNode as OnnxNode, type ReadTensor as OnnxTensor } from "./onnx-reader.ts";

export type ResizeCoordinates = "half_pixel" | "pytorch_half_pixel" | "align_corners" | "asymmetric";

export interface ConvOp {
  op: "conv";
  input: string;
  output: string;
  /** Index into GraphProgram.convWeights. */
  weights: number;
  kernel: [number, number];
  strides: [number, number];
  dilations: [number, number];
  /** top, left, bottom, right. */
  pads: [number, number, number, number];
  relu: boolean;
}
export interface MaxPoolOp {
  op: "maxpool";
  input: string;
  output: string;
  kernel: [number, number];
  strides: [number, number];
  pads: [number, number, number, number];
  ceil: boolean;
}
export interface ResizeOp {
  op: "resize";
  input: string;
  output: string;
  scales: [number, number];
  coordinates: ResizeCoordinates;
}
export interface AddOp {
  op: "add";
  inputs: [string, string];
  output: string;
}
export interface UnaryOp {
  op: "relu" | "sigmoid";
  input: string;
  output: string;
}
export interface ConcatOp {
  op: "concat";
  inputs: string[];
  output: string;
}
export type ProgramOp = ConvOp | MaxPoolOp | ResizeOp | AddOp | UnaryOp | ConcatOp;

export interface ConvWeights {
  /** [outC, inC, kh, kw] */
  dims: [number, number, number, number];
  values: Float32Array;
  bias: Float32Array;
}

export interface GraphProgram {
  input: string;
  output: string;
  ops: ProgramOp[];
  convWeights: ConvWeights[];
}

export type ProgramResult = { ok: true; program: GraphProgram } | { ok: false; reason: string };

const RESIZE_COORDINATES: readonly string[] = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"];

const attrString = (n: OnnxNode, name: string): string | undefined => n.strings.get(name);
const attrInts = (n: OnnxNode, name: string): number[] | undefined => n.ints.get(name);
const attrInt = (n: OnnxNode, name: string): number | undefined => n.ints.get(name)?.[0];

function pair(v: number[] | undefined, fallback: number): [number, number] {
  return v && v.length === 2 ? [v[0]!, v[1]!] : [fallback, fallback];
}

function pads4(n: OnnxNode): [number, number, number, number] | undefined {
  const p = attrInts(n, "pads");
  if (!p || p.length === 0) return [0, 0, 0, 0];
  return p.length === 4 ? [p[0]!, p[1]!, p[2]!, p[3]!] : undefined;
}

class Refused extends Error {}
const refuse = (n: OnnxNode, why: string): never => {
  throw new Refused(`${n.opType} ${n.name || n.outputs[0]}: ${why}`);
};

/** The graph of `bytes` as planned operators, or why it cannot be planned. */
export function readGraphProgram(bytes: Uint8Array, names: { inputName: string; outputName: string }): ProgramResult {
  try {
    return { ok: true, program: build(bytes, names) };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, reason: err.message };
    return { ok: false, reason: `unreadable graph: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function build(bytes: Uint8Array, names: { inputName: string; outputName: string }): GraphProgram {
  const model = readOnnxGraph(bytes);
  if (model.unreadInitializers) throw new Refused("an initializer is not stored as raw data");
  const constants: Map<string, OnnxTensor> = model.initializers;
  const folded = new Map<string, { dims: number[]; values: Float32Array }>();
  const constant = (name: string) => {
    const f = folded.get(name);
    if (f) return f;
    const t = constants.get(name);
    if (!t || (t.dataType !== FLOAT && t.dataType !== FLOAT16)) return undefined;
    const made = { dims: t.dims, values: floatValues(t) };
    folded.set(name, made);
    return made;
  };
  // Activation names that are the same tensor (a Cast between float types).
  const alias = new Map<string, string>();
  const canon = (name: string): string => {
    let n = name;
    while (alias.has(n)) n = alias.get(n)!;
    return n;
  };
  const ops: ProgramOp[] = [];
  const convWeights: ConvWeights[] = [];
  for (const n of model.nodes) {
    if (n.domain && n.domain !== "ai.onnx") refuse(n, `domain ${n.domain}`);
    const out = n.outputs[0]!;
    const input = (i: number) => {
      const name = n.inputs[i];
      if (!name) refuse(n, `input ${i} missing`);
      if (constants.has(name!) || folded.has(name!)) refuse(n, `input ${i} is a constant`);
      return canon(name!);
    };
    if (n.outputs.length !== 1 && n.opType !== "MaxPool") refuse(n, "more than one output");
    switch (n.opType) {
      case "Cast": {
        const to = attrInt(n, "to");
        if (to !== FLOAT && to !== FLOAT16) refuse(n, `cast to type ${to}`);
        const c = constant(n.inputs[0]!);
        if (c) folded.set(out, c);
        else if (constants.has(n.inputs[0]!)) refuse(n, "cast of a non-float constant");
        else alias.set(out, canon(n.inputs[0]!));
        break;
      }
      case "Conv": {
        const w = constant(n.inputs[1]!);
        const b = n.inputs[2] ? constant(n.inputs[2]) : undefined;
        if (!w || w.dims.length !== 4) refuse(n, "weights are not a constant 4-D float tensor");
        if ((attrInt(n, "group") ?? 1) !== 1) refuse(n, "grouped convolution");
        const autoPad = attrString(n, "auto_pad");
        if (autoPad && autoPad !== "NOTSET") refuse(n, `auto_pad ${autoPad}`);
        const pads = pads4(n) ?? refuse(n, "pads are not 2-D");
        const [oc, ic, kh, kw] = w!.dims as [number, number, number, number];
        const kernel = pair(attrInts(n, "kernel_shape"), 0);
        if (kernel[0] && (kernel[0] !== kh || kernel[1] !== kw)) refuse(n, "kernel_shape differs from the weights");
        if (n.inputs[2] && (!b || b.values.length !== oc)) refuse(n, "bias is not a constant of one value an output channel");
        convWeights.push({ dims: [oc, ic, kh, kw], values: w!.values, bias: b?.values ?? new Float32Array(oc) });
        ops.push({ op: "conv", input: input(0), output: out, weights: convWeights.length - 1, kernel: [kh, kw], strides: pair(attrInts(n, "strides"), 1), dilations: pair(attrInts(n, "dilations"), 1), pads: pads as [number, number, number, number], relu: false });
        break;
      }
      case "Relu":
        ops.push({ op: "relu", input: input(0), output: out });
        break;
      case "Sigmoid":
        ops.push({ op: "sigmoid", input: input(0), output: out });
        break;
      case "Add":
        ops.push({ op: "add", inputs: [input(0), input(1)], output: out });
        break;
      case "MaxPool": {
        if (n.outputs.length > 1 && n.outputs[1]) refuse(n, "indices output");
        const autoPad = attrString(n, "auto_pad");
        if (autoPad && autoPad !== "NOTSET") refuse(n, `auto_pad ${autoPad}`);
        if ((attrInts(n, "dilations") ?? [1, 1]).some((d) => d !== 1)) refuse(n, "dilated pooling");
        if ((attrInt(n, "storage_order") ?? 0) !== 0) refuse(n, "storage_order");
        const kernel = attrInts(n, "kernel_shape");
        if (!kernel || kernel.length !== 2) refuse(n, "kernel is not 2-D");
        const pads = pads4(n) ?? refuse(n, "pads are not 2-D");
        ops.push({ op: "maxpool", input: input(0), output: out, kernel: pair(kernel, 1), strides: pair(attrInts(n, "strides"), 1), pads: pads as [number, number, number, number], ceil: (attrInt(n, "ceil_mode") ?? 0) === 1 });
        break;
      }
      case "Resize": {
        if ((attrString(n, "mode") ?? "nearest") !== "linear") refuse(n, `mode ${attrString(n, "mode") ?? "nearest"}`);
        const coordinates = attrString(n, "coordinate_transformation_mode") ?? "half_pixel";
        if (!RESIZE_COORDINATES.includes(coordinates)) refuse(n, `coordinate_transformation_mode ${coordinates}`);
        if ((attrInt(n, "antialias") ?? 0) !== 0) refuse(n, "antialias");
        if (n.inputs[3]) refuse(n, "sizes instead of scales");
        const scales = n.inputs[2] ? constant(n.inputs[2]) : undefined;
        if (!scales || scales.values.length !== 4 || scales.values[0] !== 1 || scales.values[1] !== 1) refuse(n, "scales are not a constant [1, 1, h, w]");
        ops.push({ op: "resize", input: input(0), output: out, scales: [scales!.values[2]!, scales!.values[3]!], coordinates: coordinates as ResizeCoordinates });
        break;
      }
      case "Concat": {
        if (attrInt(n, "axis") !== 1) refuse(n, `axis ${attrInt(n, "axis")} (channels only)`);
        ops.push({ op: "concat", inputs: n.inputs.map((_, i) => input(i)), output: out });
        break;
      }
      default:
        refuse(n, "operator not planned");
    }
  }
  const output = canon(names.outputName);
  if (!ops.some((o) => o.output === output)) throw new Refused(`no node makes the output "${names.outputName}"`);
  return { input: names.inputName, output, ops: fuseRelu(ops, output), convWeights };
}

/** A Relu whose input is a convolution's output read by nothing else becomes part of it. */
function fuseRelu(ops: ProgramOp[], output: string): ProgramOp[] {
  const readers = new Map<string, number>();
  for (const o of ops) for (const i of "inputs" in o ? o.inputs : [o.input]) readers.set(i, (readers.get(i) ?? 0) + 1);
  const byOutput = new Map(ops.map((o) => [o.output, o]));
  const fused = new Set<ProgramOp>();
  for (const o of ops) {
    if (o.op !== "relu") continue;
    const conv = byOutput.get(o.input);
    if (conv?.op !== "conv" || conv.relu || readers.get(o.input) !== 1 || o.input === output) continue;
    conv.relu = true;
    conv.output = o.output;
    fused.add(o);
  }
  return ops.filter((o) => !fused.has(o));
}
