// An ONNX model as the quantiser needs it: the graph's nodes and initializers decoded,
// everything else kept as wire fields and written back unchanged. Field numbers are those
// of onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto). Only
// initializers stored as raw_data are decoded; others pass through untouched.
import { bytesField, fieldInt, fieldString, intField, msgField, readFields, strField, writeFields, type WireField } from "./onnx-wire.ts";

/** TensorProto.DataType values used here. */
export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, FLOAT16: 10 } as const;

export interface OnnxAttribute {
  name: string;
  /** The attribute's own fields (name included), for writing back. */
  fields: WireField[];
}

export interface OnnxNode {
  opType: string;
  name: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  attributes: OnnxAttribute[];
}

export interface OnnxTensor {
  name: string;
  dims: number[];
  dataType: number;
  /** Little-endian element bytes (raw_data). */
  raw: Uint8Array;
}

export interface OnnxModel {
  /** ModelProto fields other than the graph. */
  modelFields: WireField[];
  /** GraphProto fields other than nodes and initializers (name, inputs, outputs, value_info). */
  graphFields: WireField[];
  nodes: OnnxNode[];
  /** In file order; tensors not stored as raw_data are kept as fields in `otherInitializers`. */
  initializers: OnnxTensor[];
  otherInitializers: WireField[];
}

function parseNode(buf: Uint8Array): OnnxNode {
  const n: OnnxNode = { opType: "", name: "", domain: "", inputs: [], outputs: [], attributes: [] };
  for (const f of readFields(buf)) {
    if (f.no === 1) n.inputs.push(fieldString(f));
    else if (f.no === 2) n.outputs.push(fieldString(f));
    else if (f.no === 3) n.name = fieldString(f);
    else if (f.no === 4) n.opType = fieldString(f);
    else if (f.no === 5) {
      const fields = readFields(f.bytes!);
      n.attributes.push({ name: fieldString(fields.find((a) => a.no === 1)!), fields });
    } else if (f.no === 7) n.domain = fieldString(f);
  }
  return n;
}

export function writeNode(n: OnnxNode): WireField[] {
  return [
    ...n.inputs.map((i) => strField(1, i)),
    ...n.outputs.map((o) => strField(2, o)),
    ...(n.name ? [strField(3, n.name)] : []),
    strField(4, n.opType),
    ...n.attributes.map((a) => msgField(5, a.fields)),
    ...(n.domain ? [strField(7, n.domain)] : []),
  ];
}

/** Returns the tensor, or undefined when it is not a plain raw_data tensor. */
function parseTensor(buf: Uint8Array): OnnxTensor | undefined {
  const t: OnnxTensor = { name: "", dims: [], dataType: 0, raw: new Uint8Array(0) };
  let hasRaw = false;
  for (const f of readFields(buf)) {
    if (f.no === 1 && f.type === 0) t.dims.push(fieldInt(f));
    else if (f.no === 1 && f.type === 2) {
      // packed dims
      for (const d of readPackedVarints(f.bytes!)) t.dims.push(d);
    } else if (f.no === 2) t.dataType = fieldInt(f);
    else if (f.no === 8) t.name = fieldString(f);
    else if (f.no === 9) {
      t.raw = f.bytes!;
      hasRaw = true;
    } else if (f.no !== 12 && f.no !== 13) return undefined; // typed data fields, segments, external data
  }
  return hasRaw ? t : undefined;
}

function readPackedVarints(buf: Uint8Array): number[] {
  const out: number[] = [];
  let v = 0n;
  let shift = 0n;
  for (const b of buf) {
    v |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) {
      out.push(Number(BigInt.asIntN(64, v)));
      v = 0n;
      shift = 0n;
    } else shift += 7n;
  }
  return out;
}

export function writeTensor(t: OnnxTensor): WireField[] {
  return [...t.dims.map((d) => intField(1, d)), intField(2, t.dataType), strField(8, t.name), bytesField(9, t.raw)];
}

export function parseModel(bytes: Uint8Array): OnnxModel {
  const model: OnnxModel = { modelFields: [], graphFields: [], nodes: [], initializers: [], otherInitializers: [] };
  let graph: Uint8Array | undefined;
  for (const f of readFields(bytes)) {
    if (f.no === 7 && f.type === 2) graph = f.bytes;
    else model.modelFields.push(f);
  }
  if (!graph) throw new Error("not an ONNX model: no graph");
  for (const f of readFields(graph)) {
    if (f.no === 1) model.nodes.push(parseNode(f.bytes!));
    else if (f.no === 5) {
      const t = parseTensor(f.bytes!);
      if (t) model.initializers.push(t);
      else model.otherInitializers.push(f);
    } else model.graphFields.push(f);
  }
  return model;
}

export function writeModel(m: OnnxModel): Uint8Array {
  const graph = writeFields([
    ...m.nodes.map((n) => msgField(1, writeNode(n))),
    ...m.initializers.map((t) => msgField(5, writeTensor(t))),
    ...m.otherInitializers,
    ...m.graphFields,
  ]);
  // The graph goes where onnx writers put it (field 7, after the header fields).
  const before = m.modelFields.filter((f) => f.no < 7);
  const after = m.modelFields.filter((f) => f.no > 7);
  return writeFields([...before, bytesField(7, graph), ...after]);
}

// --- attribute helpers ---

export function attrInts(n: OnnxNode, name: string): number[] | undefined {
  const a = n.attributes.find((x) => x.name === name);
  if (!a) return undefined;
  const out: number[] = [];
  for (const f of a.fields) {
    if (f.no === 8 && f.type === 0) out.push(fieldInt(f));
    else if (f.no === 8 && f.type === 2) out.push(...readPackedVarints(f.bytes!));
  }
  return out;
}

export function attrInt(n: OnnxNode, name: string): number | undefined {
  const f = n.attributes.find((x) => x.name === name)?.fields.find((x) => x.no === 3);
  return f ? fieldInt(f) : undefined;
}

export function attrTensor(n: OnnxNode, name: string): OnnxTensor | undefined {
  const f = n.attributes.find((x) => x.name === name)?.fields.find((x) => x.no === 5);
  return f ? parseTensor(f.bytes!) : undefined;
}
