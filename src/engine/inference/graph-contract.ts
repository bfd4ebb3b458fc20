// A card held against the graph it describes, before any session starts: the input and
// output it names exist, and the ranks, channel count and fixed sizes agree. A mismatch is
// reported at start, every difference named, instead of as a failed run on the first
// image. The graph's inputs and outputs are read from the file by
// src/engine/assets/onnx-io.ts (this folder imports nothing of that one).
import type { BoundModel, ModelCard } from "./model-card.ts";

export interface GraphValue {
  name: string;
  /** TensorProto.DataType (1 = float32); 0 when the file does not say. */
  elemType: number;
  /** Each dim: a number when fixed, the parameter's name when symbolic, null when unnamed; undefined: no shape given. */
  dims: (number | string | null)[] | undefined;
}

export interface GraphIo {
  /** The graph's inputs less its initializers (files before IR 4 list weights as inputs too). */
  inputs: GraphValue[];
  outputs: GraphValue[];
}

const FLOAT = 1;

const describe = (v: GraphValue) => `"${v.name}" [${v.dims ? v.dims.map((d) => d ?? "?").join(", ") : "shape not given"}]`;
const list = (vs: GraphValue[]) => (vs.length ? vs.map(describe).join(", ") : "none");

/** The card with the graph's input and output names filled in, or every difference found. */
export function bindCard(card: ModelCard & { sha256?: string }, io: GraphIo): { ok: true; model: BoundModel } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const input = pickInput(card, io, problems);
  const output = pickOutput(card, io, problems);
  if (input) checkInput(card, input, problems);
  if (output) checkOutput(card, output, problems);
  if (problems.length || !input || !output) return { ok: false, problems };
  // A named first dim on both sides: one run takes several pictures (src/engine/assets/gpu-graph.ts).
  const batches = typeof input.dims?.[0] === "string" && typeof output.dims?.[0] === "string";
  return { ok: true, model: { ...card, inputName: input.name, outputName: output.name, ...(batches ? { batches } : {}) } };
}

function pickInput(card: ModelCard, io: GraphIo, problems: string[]): GraphValue | undefined {
  if (card.inputName !== undefined) {
    const found = io.inputs.find((i) => i.name === card.inputName);
    if (!found) problems.push(`inputName "${card.inputName}": the graph has no such input (its inputs: ${list(io.inputs)})`);
    return found;
  }
  if (io.inputs.length !== 1) {
    problems.push(`inputName: the card names none, and the graph has ${io.inputs.length} inputs (${list(io.inputs)}); name the picture's`);
    return undefined;
  }
  return io.inputs[0];
}

function pickOutput(card: ModelCard, io: GraphIo, problems: string[]): GraphValue | undefined {
  if (card.outputCount !== undefined && card.outputCount !== io.outputs.length) {
    problems.push(`outputCount ${card.outputCount}: the graph has ${io.outputs.length} outputs (${list(io.outputs)})`);
  }
  if (card.outputName !== undefined) {
    const found = io.outputs.find((o) => o.name === card.outputName);
    if (!found) problems.push(`outputName "${card.outputName}": the graph has no such output (its outputs: ${list(io.outputs)})`);
    return found;
  }
  const index = card.outputIndex ?? 0;
  const found = io.outputs[index];
  if (!found) problems.push(`outputIndex ${index}: the graph has ${io.outputs.length} outputs (${list(io.outputs)})`);
  return found;
}

function checkInput(card: ModelCard, input: GraphValue, problems: string[]): void {
  const what = `input ${describe(input)}`;
  if (input.elemType !== 0 && input.elemType !== FLOAT) problems.push(`${what}: element type ${input.elemType}, not float32`);
  const dims = input.dims;
  if (!dims) return;
  if (dims.length !== 4) {
    problems.push(`${what}: rank ${dims.length}, the card's layout ${card.layout} needs 4`);
    return;
  }
  const [channelAt, hAt, wAt] = card.layout === "NHWC" ? [3, 1, 2] : [1, 2, 3];
  if (typeof dims[0] === "number" && dims[0] !== 1) problems.push(`${what}: batch ${dims[0]}, one picture needs 1`);
  if (typeof dims[channelAt] === "number" && dims[channelAt] !== 3) {
    problems.push(`layout ${card.layout}: ${what} has ${dims[channelAt]} at the channel position (dim ${channelAt}), not 3`);
  }
  const h = dims[hAt];
  const w = dims[wAt];
  if (card.sizes && (typeof h === "number" || typeof w === "number")) {
    problems.push(`sizes: the card lets the size vary, but ${what} has a fixed ${typeof h === "number" ? "height" : "width"}`);
    return;
  }
  const [ch, cw] = card.inputSize;
  if ((typeof h === "number" && h !== ch) || (typeof w === "number" && w !== cw)) {
    problems.push(`inputSize [${ch}, ${cw}]: ${what} takes ${h ?? "?"} x ${w ?? "?"} (height x width)`);
  }
}

function checkOutput(card: ModelCard, output: GraphValue, problems: string[]): void {
  const what = `output ${describe(output)}`;
  if (output.elemType !== 0 && output.elemType !== FLOAT) problems.push(`${what}: element type ${output.elemType}, not float32`);
  const dims = output.dims;
  if (!dims) return;
  if (dims.length < 2 || dims.length > 4) {
    problems.push(`${what}: rank ${dims.length}, a mask is [H, W] with at most two leading 1s`);
    return;
  }
  // Leading dims (batch, channel) must be 1: the mask is one plane.
  const leading = card.layout === "NHWC" && dims.length === 4 && dims[3] === 1 ? [dims[0]] : dims.slice(0, -2);
  if (leading.some((d) => typeof d === "number" && d !== 1)) problems.push(`${what}: more than one plane (a mask is [1, 1, H, W])`);
  if (card.sizes) return;
  // An NHWC graph may give its mask as [1, H, W, 1].
  const channelLast = card.layout === "NHWC" && dims.length === 4 && dims[3] === 1;
  const [h, w] = channelLast ? dims.slice(1, 3) : dims.slice(-2);
  const [ch, cw] = card.inputSize;
  if ((typeof h === "number" && h !== ch) || (typeof w === "number" && w !== cw)) {
    problems.push(`inputSize [${ch}, ${cw}]: ${what} gives a ${h ?? "?"} x ${w ?? "?"} mask`);
  }
}
