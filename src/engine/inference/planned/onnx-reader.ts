// The little of an ONNX file the planned run reads: the graph's nodes (operator, names,
// integer and string attributes) and its raw-data initializers as float32. Field numbers
// are onnx.proto's (ModelProto.graph 7; GraphProto node 1, initializer 5; NodeProto input 1,
// output 2, name 3, op_type 4, attribute 5, domain 7; AttributeProto name 1, i 3, s 4,
// ints 8; TensorProto dims 1, data_type 2, name 8, raw_data 9). The inference layer imports
// nothing of the model-assembly code (src/engine/assets/), which reads and writes whole
// models, so this reads its own.

export interface ReadNode {
  opType: string;
  name: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  ints: Map<string, number[]>;
  strings: Map<string, string>;
}

export interface ReadTensor {
  dims: number[];
  dataType: number;
  raw: Uint8Array;
}

export interface ReadGraph {
  nodes: ReadNode[];
  initializers: Map<string, ReadTensor>;
  /** Initializers stored other than as raw data (typed fields, external files): not read. */
  unreadInitializers: number;
}

/** TensorProto.DataType values read here. */
export const FLOAT = 1;
export const FLOAT16 = 10;

interface Field {
  no: number;
  wire: number;
  value: number;
  bytes: Uint8Array;
}

const utf8 = new TextDecoder();

function* fields(buf: Uint8Array): Generator<Field> {
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    let scale = 1;
    for (;;) {
      if (pos >= buf.length) throw new Error("truncated varint");
      const b = buf[pos++]!;
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v >= 2 ** 63 ? v - 2 ** 64 : v;
      scale *= 128;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) yield { no, wire, value: varint(), bytes: buf.subarray(0, 0) };
    else if (wire === 2) {
      const len = varint();
      if (pos + len > buf.length) throw new Error("truncated field");
      yield { no, wire, value: len, bytes: buf.subarray(pos, pos + len) };
      pos += len;
    } else if (wire === 1 || wire === 5) {
      const len = wire === 1 ? 8 : 4;
      yield { no, wire, value: 0, bytes: buf.subarray(pos, pos + len) };
      pos += len;
    } else throw new Error(`wire type ${wire} not read`);
  }
}

function varintsOf(buf: Uint8Array): number[] {
  const out: number[] = [];
  let v = 0;
  let scale = 1;
  for (const b of buf) {
    v += (b & 0x7f) * scale;
    if (b < 0x80) {
      out.push(v >= 2 ** 63 ? v - 2 ** 64 : v);
      v = 0;
      scale = 1;
    } else scale *= 128;
  }
  return out;
}

/** Varints in a packed field, or one unpacked varint. */
const ints = (f: Field): number[] => (f.wire === 0 ? [f.value] : varintsOf(f.bytes));

function readNode(buf: Uint8Array): ReadNode {
  const n: ReadNode = { opType: "", name: "", domain: "", inputs: [], outputs: [], ints: new Map(), strings: new Map() };
  for (const f of fields(buf)) {
    if (f.no === 1) n.inputs.push(utf8.decode(f.bytes));
    else if (f.no === 2) n.outputs.push(utf8.decode(f.bytes));
    else if (f.no === 3) n.name = utf8.decode(f.bytes);
    else if (f.no === 4) n.opType = utf8.decode(f.bytes);
    else if (f.no === 7) n.domain = utf8.decode(f.bytes);
    else if (f.no === 5) {
      let name = "";
      const values: number[] = [];
      let text: string | undefined;
      for (const a of fields(f.bytes)) {
        if (a.no === 1) name = utf8.decode(a.bytes);
        else if (a.no === 3) values.push(a.value);
        else if (a.no === 8) values.push(...ints(a));
        else if (a.no === 4) text = utf8.decode(a.bytes);
      }
      if (text !== undefined) n.strings.set(name, text);
      else n.ints.set(name, values);
    }
  }
  return n;
}

function readTensor(buf: Uint8Array): { name: string; tensor?: ReadTensor } {
  const t: ReadTensor = { dims: [], dataType: 0, raw: new Uint8Array(0) };
  let name = "";
  let raw = false;
  let other = false;
  for (const f of fields(buf)) {
    if (f.no === 1) t.dims.push(...ints(f));
    else if (f.no === 2) t.dataType = f.value;
    else if (f.no === 8) name = utf8.decode(f.bytes);
    else if (f.no === 9) {
      t.raw = f.bytes;
      raw = true;
    } else if (f.no !== 12) other = true; // 12: doc_string
  }
  return raw && !other ? { name, tensor: t } : { name };
}

export function readOnnxGraph(bytes: Uint8Array): ReadGraph {
  let graph: Uint8Array | undefined;
  for (const f of fields(bytes)) if (f.no === 7 && f.wire === 2) graph = f.bytes;
  if (!graph) throw new Error("not an ONNX model: no graph");
  const out: ReadGraph = { nodes: [], initializers: new Map(), unreadInitializers: 0 };
  for (const f of fields(graph)) {
    if (f.no === 1) out.nodes.push(readNode(f.bytes));
    else if (f.no === 5) {
      const { name, tensor } = readTensor(f.bytes);
      if (tensor) out.initializers.set(name, tensor);
      else out.unreadInitializers++;
    }
  }
  return out;
}

/** A float32 or float16 tensor's values as float32. */
export function floatValues(t: ReadTensor): Float32Array {
  const view = new DataView(t.raw.buffer, t.raw.byteOffset, t.raw.byteLength);
  if (t.dataType === FLOAT) return Float32Array.from({ length: t.raw.byteLength / 4 }, (_, i) => view.getFloat32(i * 4, true));
  if (t.dataType !== FLOAT16) throw new Error(`data type ${t.dataType} is not a float type`);
  return Float32Array.from({ length: t.raw.byteLength / 2 }, (_, i) => halfToFloat(view.getUint16(i * 2, true)));
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
