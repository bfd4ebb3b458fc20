// Graph inputs and outputs (ValueInfoProto) written anew: a tensor of one element type whose
// dims are fixed numbers or named (symbolic) ones. Field numbers from onnx.proto:
// ValueInfoProto name 1, type 2; TypeProto tensor_type 1; Tensor elem_type 1, shape 2;
// TensorShapeProto dim 1; Dimension dim_value 1, dim_param 2.
import { intField, msgField, strField, type WireField } from "./onnx-wire.ts";
import { readValueInfo } from "./onnx-io.ts";

export type Dim = number | string;

/** A tensor value info as field `no` of a GraphProto (11 input, 12 output, 13 value_info). */
export function tensorValueInfo(no: number, name: string, elemType: number, dims: readonly Dim[]): WireField {
  const dim = (d: Dim) => msgField(1, [typeof d === "number" ? intField(1, d) : strField(2, d)]);
  const tensor = msgField(1, [intField(1, elemType), msgField(2, dims.map(dim))]);
  return msgField(no, [strField(1, name), msgField(2, [tensor])]);
}

/** The same value info with `change` applied to its dims (an unknown dim reads as its index's name). */
export function withDims(f: WireField, change: (dims: Dim[]) => Dim[]): WireField {
  const v = readValueInfo(f.bytes!);
  const dims = (v.dims ?? []).map((d, i) => d ?? `d${i}`);
  return tensorValueInfo(f.no, v.name, v.elemType, change(dims));
}
