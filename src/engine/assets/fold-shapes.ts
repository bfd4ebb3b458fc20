// Folds a graph's shape arithmetic to constants for one fixed input size. An exported
// IS-Net computes every upsampling's target size at run time (Shape → Slice → Concat →
// Resize's `sizes`); ONNX Runtime runs shape operators on the CPU, so on a GPU each of
// them is a hand-off between the devices. With the input size fixed the answers are
// known: each tensor's shape is propagated through the operators IS-Net uses, the integer
// subgraphs are evaluated, every Resize reads its sizes (or scales) from an initializer,
// and the nodes nothing reads any more are dropped. An operator not known here leaves
// what depends on it as it was: the result is never wrong, at worst less folded.
import { DataType, attrInt, attrInts, attrTensor, type OnnxModel, type OnnxNode, type OnnxTensor } from "./onnx-graph.ts";
import { fieldString, readFields } from "./onnx-wire.ts";

type Shape = number[];

function int64Values(t: OnnxTensor): number[] | undefined {
  if (t.dataType !== DataType.INT64) return undefined;
  const view = new DataView(t.raw.buffer, t.raw.byteOffset, t.raw.byteLength);
  return Array.from({ length: t.raw.length / 8 }, (_, i) => Number(view.getBigInt64(i * 8, true)));
}

function int64Tensor(name: string, values: readonly number[]): OnnxTensor {
  const raw = new Uint8Array(values.length * 8);
  const view = new DataView(raw.buffer);
  values.forEach((v, i) => view.setBigInt64(i * 8, BigInt(v), true));
  return { name, dims: [values.length], dataType: DataType.INT64, raw };
}

function floatValues(t: OnnxTensor): number[] | undefined {
  if (t.dataType !== DataType.FLOAT) return undefined;
  const view = new DataView(t.raw.buffer, t.raw.byteOffset, t.raw.byteLength);
  return Array.from({ length: t.raw.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

/** One spatial output size of a sliding window (Conv, MaxPool). */
function window(size: number, kernel: number, stride: number, padBegin: number, padEnd: number, dilation: number, ceil: boolean): number {
  const span = (size + padBegin + padEnd - dilation * (kernel - 1) - 1) / stride;
  return (ceil ? Math.ceil(span) : Math.floor(span)) + 1;
}

function slidingShape(n: OnnxNode, x: Shape, outChannels: number, kernel: number[]): Shape | undefined {
  const autoPad = n.attributes.find((a) => a.name === "auto_pad");
  if (autoPad && fieldString(autoPad.fields.find((f) => f.no === 4)!) !== "NOTSET") return undefined;
  const dims = kernel.length;
  const strides = attrInts(n, "strides") ?? Array(dims).fill(1);
  const dilations = attrInts(n, "dilations") ?? Array(dims).fill(1);
  const pads = attrInts(n, "pads") ?? Array(2 * dims).fill(0);
  const ceil = attrInt(n, "ceil_mode") === 1;
  return [x[0]!, outChannels, ...kernel.map((k, i) => window(x[2 + i]!, k, strides[i]!, pads[i]!, pads[i + dims]!, dilations[i]!, ceil))];
}

/** Python-style slice bounds, as ONNX's Slice clamps them. */
function sliceOf(values: number[], start: number, end: number, step: number): number[] {
  const n = values.length;
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v < 0 ? v + n : v));
  const out: number[] = [];
  if (step > 0) for (let i = clamp(start, 0, n); i < clamp(end, 0, n); i += step) out.push(values[i]!);
  else for (let i = clamp(start, -1, n - 1); i > clamp(end, -1, n - 1); i += step) out.push(values[i]!);
  return out;
}

/**
 * Rewrites `model` (its nodes in topological order) for an input of [1, 3, height, width];
 * returns it with how many Resize inputs became constants.
 */
export function foldShapes(model: OnnxModel, inputSize: readonly [number, number]): OnnxModel & { folded: number } {
  const graphInputs = model.graphFields.filter((f) => f.no === 11).map((f) => fieldString(readFields(f.bytes!).find((x) => x.no === 1)!));
  const graphOutputs = new Set(model.graphFields.filter((f) => f.no === 12).map((f) => fieldString(readFields(f.bytes!).find((x) => x.no === 1)!)));
  const inits = new Map(model.initializers.map((t) => [t.name, t]));
  const shapes = new Map<string, Shape>();
  // Known values of small integer (and float scale) tensors.
  const values = new Map<string, number[]>();
  for (const t of model.initializers) {
    shapes.set(t.name, t.dims);
    const v = int64Values(t) ?? (t.raw.length <= 64 ? floatValues(t) : undefined);
    if (v) values.set(t.name, v);
  }
  const [height, width] = inputSize;
  for (const name of graphInputs) if (!inits.has(name)) shapes.set(name, [1, 3, height, width]);

  for (const n of model.nodes) {
    const x = shapes.get(n.inputs[0] ?? "");
    const out = n.outputs[0]!;
    switch (n.opType) {
      case "Constant": {
        const t = attrTensor(n, "value");
        if (t) {
          shapes.set(out, t.dims);
          const v = int64Values(t) ?? floatValues(t);
          if (v) values.set(out, v);
        }
        break;
      }
      case "Relu":
      case "Sigmoid":
      case "Cast":
      case "Add":
        if (x) shapes.set(out, x);
        if (n.opType === "Cast" && values.has(n.inputs[0]!)) values.set(out, values.get(n.inputs[0]!)!);
        break;
      case "Conv": {
        const w = shapes.get(n.inputs[1]!);
        const s = x && w && slidingShape(n, x, w[0]!, w.slice(2));
        if (s) shapes.set(out, s);
        break;
      }
      case "MaxPool": {
        const kernel = attrInts(n, "kernel_shape");
        const s = x && kernel && slidingShape(n, x, x[1]!, kernel);
        if (s) shapes.set(out, s);
        break;
      }
      case "Concat": {
        const parts = n.inputs.map((i) => shapes.get(i));
        if (parts.every((p) => p !== undefined)) {
          const axis = attrInt(n, "axis") ?? 0;
          const a = axis < 0 ? axis + parts[0]!.length : axis;
          shapes.set(out, parts[0]!.map((d, i) => (i === a ? parts.reduce((sum, p) => sum + p![i]!, 0) : d)));
        }
        const known = n.inputs.map((i) => values.get(i));
        if (known.every((v) => v !== undefined)) values.set(out, known.flat() as number[]);
        break;
      }
      case "Shape":
        if (x) {
          const start = attrInt(n, "start") ?? 0;
          const end = attrInt(n, "end") ?? x.length;
          const v = sliceOf(x, start, end, 1);
          values.set(out, v);
          shapes.set(out, [v.length]);
        }
        break;
      case "Slice": {
        const [data, starts, ends, axes, steps] = n.inputs.map((i) => (i ? values.get(i) : undefined));
        // Only 1-D integer data (shape vectors) on axis 0.
        if (data && starts && ends && starts.length === 1 && (!axes || axes[0] === 0 || axes[0] === -1)) {
          const v = sliceOf(data, starts[0]!, ends[0]!, steps?.[0] ?? 1);
          values.set(out, v);
          shapes.set(out, [v.length]);
        }
        break;
      }
      case "Resize": {
        const sizes = n.inputs[3] ? values.get(n.inputs[3]) : undefined;
        const scales = n.inputs[2] ? values.get(n.inputs[2]) : undefined;
        if (sizes) shapes.set(out, sizes);
        else if (x && scales && scales.length === x.length) shapes.set(out, x.map((d, i) => Math.floor(d * scales[i]!)));
        break;
      }
    }
  }

  // Every Resize reads constant sizes or scales from an initializer of its own.
  const constants = new Set(model.nodes.filter((n) => n.opType === "Constant").flatMap((n) => n.outputs));
  const added: OnnxTensor[] = [];
  let folded = 0;
  const nodes = model.nodes.map((n) => {
    if (n.opType !== "Resize") return n;
    const inputs = [...n.inputs];
    for (const slot of [2, 3]) {
      const name = inputs[slot];
      // An initializer or a Constant node is a constant already.
      if (!name || inits.has(name) || constants.has(name)) continue;
      const v = values.get(name);
      if (!v) continue;
      const t = slot === 3 ? int64Tensor(`${n.name}_sizes_folded`, v) : floatScales(`${n.name}_scales_folded`, v);
      added.push(t);
      inputs[slot] = t.name;
      folded++;
    }
    return { ...n, inputs };
  });

  // Drop nodes whose outputs nothing reads (the shape arithmetic now unused), repeatedly.
  let kept = nodes;
  for (;;) {
    const read = new Set(kept.flatMap((n) => n.inputs));
    const next = kept.filter((n) => n.outputs.some((o) => read.has(o) || graphOutputs.has(o)));
    if (next.length === kept.length) break;
    kept = next;
  }
  return { ...model, nodes: kept, initializers: [...model.initializers, ...added], folded };
}

function floatScales(name: string, values: readonly number[]): OnnxTensor {
  const raw = new Uint8Array(values.length * 4);
  const view = new DataView(raw.buffer);
  values.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return { name, dims: [values.length], dataType: DataType.FLOAT, raw };
}
