// Rewrites of a GPU form (dequantise-float.ts) for ONNX Runtime's WebGPU provider, each one
// a measured choice (docs/MODEL.md, "The GPU form's graph"):
//   - batchFree: the input's and the mask's first dim named, so one run takes several
//     pictures and shares the fixed cost of a run (its dispatches, submits and read-back);
//   - halfActivations: float16 activations on adapters with `shader-f16`: the weights stay
//     the float16 the file already stores (their Casts go), biases become float16, the
//     picture is cast to float16 as it enters and the mask to float32 as it leaves.
// Pure arithmetic on the graph: same bytes in, same bytes out.
import { DataType, type OnnxModel, type OnnxNode, type OnnxTensor } from "./onnx-graph.ts";
import { intField, strField } from "./onnx-wire.ts";
import { readValueInfo } from "./onnx-io.ts";
import { onnxNode, tensorValues } from "./quantise.ts";
import { toHalfTensor } from "./half-float.ts";
import { withDims } from "./value-info.ts";

const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;

/** The name ONNX Runtime and our sessions see for the batch dim. */
export const BATCH_DIM = "batch";

/** The graph's input and output tensors take any count of pictures (first dim named). */
export function batchFree(model: OnnxModel): void {
  model.graphFields = model.graphFields.map((f) =>
    f.no === GRAPH_INPUT || f.no === GRAPH_OUTPUT ? withDims(f, ([, ...rest]) => [BATCH_DIM, ...rest]) : f,
  );
}

/** Whether the graph's input takes any count of pictures. */
export function takesBatches(model: OnnxModel): boolean {
  const input = model.graphFields.find((f) => f.no === GRAPH_INPUT);
  return !!input && typeof readValueInfo(input.bytes!).dims?.[0] === "string";
}

/**
 * Float16 activations. Every float32 tensor a node computes with becomes float16 but a
 * Resize's scales (which ONNX keeps float32); the graph's own input and output stay float32.
 */
export function halfActivations(model: OnnxModel): void {
  const inits = new Map(model.initializers.map((t) => [t.name, t]));
  // A weight's Cast to float32 goes: its readers read the float16 initializer itself.
  const rename = new Map<string, string>();
  model.nodes = model.nodes.filter((n) => {
    const from = n.opType === "Cast" ? inits.get(n.inputs[0]!) : undefined;
    if (from?.dataType !== DataType.FLOAT16) return true;
    rename.set(n.outputs[0]!, from.name);
    return false;
  });
  const halved = new Map<string, OnnxTensor>();
  for (const n of model.nodes) {
    n.inputs = n.inputs.map((name, slot) => {
      const renamed = rename.get(name) ?? name;
      const t = inits.get(renamed);
      if (!t || t.dataType !== DataType.FLOAT || (n.opType === "Resize" && slot >= 1)) return renamed;
      const half = halved.get(t.name) ?? toHalfTensor(`${t.name}_f16`, t.dims, tensorValues(t));
      halved.set(t.name, half);
      return half.name;
    });
  }
  const read = new Set(model.nodes.flatMap((n) => n.inputs));
  model.initializers = [...model.initializers, ...halved.values()].filter((t) => read.has(t.name));

  // The picture enters as float32 and is cast once; the mask leaves through a cast to float32.
  const input = readValueInfo(model.graphFields.find((f) => f.no === GRAPH_INPUT)!.bytes!).name;
  const inputHalf = `${input}_f16`;
  for (const n of model.nodes) n.inputs = n.inputs.map((i) => (i === input ? inputHalf : i));
  const casts: OnnxNode[] = [castNode(`${input}_cast_f16`, input, inputHalf, DataType.FLOAT16)];
  for (const out of graphOutputs(model)) {
    const producer = model.nodes.find((n) => n.outputs.includes(out))!;
    if (producer.opType === "Cast") {
      producer.attributes = [castAttr(DataType.FLOAT)];
      continue;
    }
    const inner = `${out}_f16`;
    producer.outputs = producer.outputs.map((o) => (o === out ? inner : o));
    for (const n of model.nodes) n.inputs = n.inputs.map((i) => (i === out ? inner : i));
    casts.push(castNode(`${out}_cast_f32`, inner, out, DataType.FLOAT));
  }
  model.nodes = [casts[0]!, ...model.nodes, ...casts.slice(1)];
}

const castAttr = (to: number) => ({ name: "to", fields: [strField(1, "to"), intField(3, to), intField(20, 2)] }); // AttributeProto: i, type INT

/** A Cast of `input` to element type `to` (a DataType). */
export const castNode = (name: string, input: string, output: string, to: number): OnnxNode => onnxNode("Cast", name, [input], [output], [castAttr(to)]);

function graphOutputs(model: OnnxModel): string[] {
  return model.graphFields.filter((f) => f.no === GRAPH_OUTPUT).map((f) => readValueInfo(f.bytes!).name);
}
