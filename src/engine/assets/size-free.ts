// Makes a traced IS-Net graph take any input size that is a multiple of its coarsest
// stride (64), and return only the mask.
//
// The exporter traced `_upsample_like(src, target)` as Resize(src, sizes) with the
// target's height and width written in as constants (Shape → Slice → Concat with a
// constant [H, W]), so the file only runs at the size it was traced at. Every one of
// those upsamplings is by a whole factor at the traced size (2, or 2^k for the side
// outputs), and stays the same factor at any side that is a multiple of 64, because
// every stride and pooling in the network halves an even size exactly. So each Resize
// gets a constant `scales` input of that factor instead, the shape plumbing goes, and
// the input's and the mask's height and width become symbolic. At the traced size the
// graph computes what it did before, value for value: ONNX Runtime's Resize derives its
// scale from sizes/input the same way.
//
// The other eleven outputs (coarser side outputs and decoder maps, used only in
// training) are dropped with every node that only they needed: less work per run and
// less memory for activations.
import { DataType, attrInt, attrInts, attrTensor, type OnnxModel, type OnnxNode } from "./onnx-graph.ts";
import { fieldString, intField, msgField, readFields, strField, type WireField } from "./onnx-wire.ts";
import { readValueInfo } from "./onnx-io.ts";
import { floatTensor } from "./quantise.ts";

const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const VALUE_INFO = 13;

type Spatial = readonly [number, number];

const valueInfoName = (f: WireField) => readValueInfo(f.bytes!).name;
/** A value info's dims, a symbolic or unnamed one as -1. */
const valueInfoDims = (f: WireField): number[] => (readValueInfo(f.bytes!).dims ?? []).map((d) => (typeof d === "number" ? d : -1));

/** A float tensor value info of rank 4 whose last two dims are named, not fixed. */
function symbolicValueInfo(name: string, dims: number[]): WireField {
  const dim = (i: number) => msgField(1, i < 2 ? [intField(1, dims[i]!)] : [strField(2, i === 2 ? "height" : "width")]);
  const shape = msgField(2, [0, 1, 2, 3].map(dim));
  const tensor = msgField(1, [intField(1, DataType.FLOAT), shape]);
  return msgField(GRAPH_INPUT, [strField(1, name), msgField(2, [tensor])]);
}

function constantValue(model: OnnxModel, name: string): number[] | undefined {
  const init = model.initializers.find((t) => t.name === name);
  const node = model.nodes.find((n) => n.opType === "Constant" && n.outputs[0] === name);
  const t = init ?? (node && attrTensor(node, "value"));
  if (!t || t.dataType !== DataType.INT64) return undefined;
  const view = new DataView(t.raw.buffer, t.raw.byteOffset, t.raw.byteLength);
  return Array.from({ length: t.raw.byteLength / 8 }, (_, i) => Number(view.getBigInt64(i * 8, true)));
}

/**
 * The constant [H, W] a traced Resize's `sizes` ends with: Concat(the source's N and C,
 * a constant [H, W]), or, where the exporter folded it, a constant [N, C, H, W].
 */
function tracedTarget(model: OnnxModel, resize: OnnxNode): Spatial {
  const sizes = resize.inputs[3];
  const concat = sizes ? model.nodes.find((n) => n.outputs[0] === sizes) : undefined;
  const folded = sizes ? constantValue(model, sizes)?.slice(2) : undefined;
  const hw = concat?.opType === "Concat" ? constantValue(model, concat.inputs[concat.inputs.length - 1]!) : folded;
  if (!hw || hw.length !== 2) throw new Error(`${resize.name}: sizes is not Concat(shape, constant [H, W]); not a traced IS-Net graph`);
  return [hw[0]!, hw[1]!];
}

const windowOut = (size: number, k: number, stride: number, padSum: number, dilation: number, ceil: boolean) => {
  const span = size + padSum - dilation * (k - 1) - 1;
  return (ceil ? Math.ceil(span / stride) : Math.floor(span / stride)) + 1;
};

/**
 * Height and width of every activation at the traced input size. Node lists are not
 * always in graph order (the fp16 converter appends its casts), so it sweeps until
 * nothing new is learnt.
 */
function spatialSizes(model: OnnxModel, input: string, at: Spatial): Map<string, Spatial> {
  const sizes = new Map<string, Spatial>([[input, at]]);
  for (let learnt = true; learnt; ) {
    learnt = false;
    for (const n of model.nodes) {
      // Only the first output is an activation (DynamicQuantizeLinear's others are its
      // scale and zero point); an elementwise node takes the size of whichever input has one.
      if (sizes.has(n.outputs[0]!)) continue;
      const from = n.inputs.map((i) => sizes.get(i)).find((s) => s !== undefined);
      const out = outputSpatial(model, n, from);
      if (!out) continue;
      sizes.set(n.outputs[0]!, out);
      learnt = true;
    }
  }
  return sizes;
}

function outputSpatial(model: OnnxModel, n: OnnxNode, x: Spatial | undefined): Spatial | undefined {
  if (!x || n.opType === "Shape" || n.opType === "Slice") return undefined;
  if (n.opType === "Conv" || n.opType === "ConvInteger" || n.opType === "MaxPool") {
    const k = attrInts(n, "kernel_shape") ?? [1, 1];
    const s = attrInts(n, "strides") ?? [1, 1];
    const p = attrInts(n, "pads") ?? [0, 0, 0, 0];
    const d = attrInts(n, "dilations") ?? [1, 1];
    const ceil = attrInt(n, "ceil_mode") === 1;
    return [windowOut(x[0], k[0]!, s[0]!, p[0]! + p[2]!, d[0]!, ceil), windowOut(x[1], k[1]!, s[1]!, p[1]! + p[3]!, d[1]!, ceil)];
  }
  return n.opType === "Resize" ? tracedTarget(model, n) : x;
}

/** Drops every node and initializer that no kept output needs. */
function pruneTo(model: OnnxModel, outputs: readonly string[]): void {
  const needed = new Set(outputs);
  const kept = new Set<OnnxNode>();
  // Sweeps until stable, like spatialSizes: the node list need not be in graph order.
  for (let grew = true; grew; ) {
    grew = false;
    for (const n of model.nodes) {
      if (kept.has(n) || !n.outputs.some((o) => needed.has(o))) continue;
      kept.add(n);
      for (const i of n.inputs) if (i) needed.add(i);
      grew = true;
    }
  }
  model.nodes = model.nodes.filter((n) => kept.has(n));
  model.initializers = model.initializers.filter((t) => needed.has(t.name));
  model.otherInitializers = model.otherInitializers.filter((f) => needed.has(fieldString(readFields(f.bytes!).find((x) => x.no === 8)!)));
}

export interface SizeFreeOptions {
  /** The graph outputs to keep (the mask); the others and what only they need are dropped. */
  keepOutputs: readonly string[];
}

/** Rewrites `model` in place; throws if it is not shaped like a traced IS-Net. */
export function makeSizeFree(model: OnnxModel, opts: SizeFreeOptions): void {
  const inputs = model.graphFields.filter((f) => f.no === GRAPH_INPUT);
  const outputs = model.graphFields.filter((f) => f.no === GRAPH_OUTPUT);
  if (inputs.length !== 1) throw new Error(`expected one graph input, found ${inputs.length}`);
  const inputName = valueInfoName(inputs[0]!);
  const inputDims = valueInfoDims(inputs[0]!);
  if (inputDims.length !== 4 || inputDims.some((d) => d <= 0)) throw new Error(`input ${inputName} must have a fixed NCHW shape, has [${inputDims}]`);
  const traced: Spatial = [inputDims[2]!, inputDims[3]!];
  const missing = opts.keepOutputs.filter((o) => !outputs.some((f) => valueInfoName(f) === o));
  if (missing.length) throw new Error(`no graph output named ${missing.join(", ")}`);

  const sizes = spatialSizes(model, inputName, traced);
  for (const n of model.nodes) {
    if (n.opType !== "Resize") continue;
    const from = sizes.get(n.inputs[0]!);
    const to = tracedTarget(model, n);
    if (!from) throw new Error(`${n.name}: cannot tell its input's size`);
    const factors = [to[0] / from[0], to[1] / from[1]];
    if (!factors.every((f) => Number.isInteger(f) && f >= 1)) throw new Error(`${n.name}: ${from.join("x")} → ${to.join("x")} is not a whole factor`);
    const scales = `${n.name}_scales`;
    model.initializers.push(floatTensor(scales, [4], [1, 1, factors[0]!, factors[1]!]));
    n.inputs = [n.inputs[0]!, "", scales];
  }
  pruneTo(model, opts.keepOutputs);

  const keptOutputs = outputs.filter((f) => opts.keepOutputs.includes(valueInfoName(f)));
  const outputDims = (f: WireField) => {
    const d = valueInfoDims(f);
    return d.length === 4 ? d : [1, 1, 0, 0];
  };
  model.graphFields = [
    ...model.graphFields.filter((f) => f.no !== GRAPH_INPUT && f.no !== GRAPH_OUTPUT && f.no !== VALUE_INFO),
    symbolicValueInfo(inputName, inputDims),
    ...keptOutputs.map((f) => ({ ...symbolicValueInfo(valueInfoName(f), outputDims(f)), no: GRAPH_OUTPUT })),
  ];
}

/** Whether a graph's input has symbolic height and width (made by makeSizeFree, or exported so). */
export function hasSymbolicSize(model: OnnxModel): boolean {
  const input = model.graphFields.find((f) => f.no === GRAPH_INPUT);
  return !!input && valueInfoDims(input).slice(2).every((d) => d === -1);
}

