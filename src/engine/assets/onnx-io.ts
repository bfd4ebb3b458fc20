// A model file's graph inputs and outputs (names, element types, dims), read without
// loading the file: the reader walks the wire fields' headers through a small window and
// steps over node lists and weights by their lengths, so a 1 GB model costs a few reads
// at start. Field numbers from onnx.proto: ModelProto.graph 7; GraphProto.initializer 5,
// input 11, output 12; TensorProto.name 8; ValueInfoProto name 1, type 2; TypeProto
// tensor_type 1; Tensor elem_type 1, shape 2; TensorShapeProto.dim 1; Dimension
// dim_value 1, dim_param 2.
import { open, type FileHandle } from "node:fs/promises";
import type { GraphIo, GraphValue } from "../inference/graph-contract.ts";
import { fieldInt, fieldString, readFields, readVarint, WireError } from "./onnx-wire.ts";

const WINDOW = 1 << 16;

/** Positional reads through one cached window of the file. */
class FileWindow {
  private start = 0;
  private buf = new Uint8Array(0);
  constructor(
    private readonly fh: FileHandle,
    readonly size: number,
  ) {}

  /** `length` bytes at `pos` (fewer at the end of the file). */
  async bytes(pos: number, length: number): Promise<Uint8Array> {
    const end = Math.min(pos + length, this.size);
    if (pos >= this.start && end <= this.start + this.buf.length) return this.buf.subarray(pos - this.start, end - this.start);
    const buf = new Uint8Array(Math.max(end - pos, Math.min(WINDOW, this.size - pos)));
    const { bytesRead } = await this.fh.read(buf, 0, buf.length, pos);
    this.start = pos;
    this.buf = buf.subarray(0, bytesRead);
    return this.buf.subarray(0, Math.min(end - pos, bytesRead));
  }
}

interface FieldAt {
  no: number;
  type: number;
  /** Where the payload starts, and its length (length-delimited fields). */
  at: number;
  length: number;
}

/** The field headers of the message in [from, to), in order; payloads are skipped, not read. */
async function* fieldsOf(win: FileWindow, from: number, to: number): AsyncGenerator<FieldAt> {
  let pos = from;
  while (pos < to) {
    const head = await win.bytes(pos, 20); // a key and a length: two varints of at most 10 bytes
    const [key, p] = readVarint(head, 0);
    const no = Number(key >> 3n);
    const type = Number(key & 7n);
    let at = pos + p;
    let length: number;
    if (type === 0) {
      length = readVarint(head, p)[1] - p;
    } else if (type === 1 || type === 5) {
      length = type === 1 ? 8 : 4;
    } else if (type === 2) {
      const [len, q] = readVarint(head, p);
      at = pos + q;
      length = Number(len);
    } else {
      throw new WireError(`unsupported wire type ${type} (field ${no})`);
    }
    if (at + length > to) throw new WireError(`field ${no}: length ${length} runs past the message`);
    yield { no, type, at, length };
    pos = at + length;
  }
}

/** A ValueInfoProto's name, element type and dims (a graph input's or output's). */
export function readValueInfo(bytes: Uint8Array): GraphValue {
  const v: GraphValue = { name: "", elemType: 0, dims: undefined };
  for (const f of readFields(bytes)) {
    if (f.no === 1) v.name = fieldString(f);
    else if (f.no === 2) {
      const tensor = readFields(f.bytes!).find((t) => t.no === 1 && t.type === 2);
      for (const t of tensor ? readFields(tensor.bytes!) : []) {
        if (t.no === 1) v.elemType = fieldInt(t);
        else if (t.no === 2) {
          v.dims = readFields(t.bytes!)
            .filter((d) => d.no === 1)
            .map((d) => {
              const inner = readFields(d.bytes!);
              const value = inner.find((x) => x.no === 1 && x.type === 0);
              const param = inner.find((x) => x.no === 2 && x.type === 2);
              return value ? fieldInt(value) : param ? fieldString(param) : null;
            });
        }
      }
    }
  }
  return v;
}

/** The graph's inputs and outputs of the .onnx file at `path`; throws (a WireError or an fs error) on a file that is not one. */
export async function readGraphIo(path: string): Promise<GraphIo> {
  const fh = await open(path, "r");
  try {
    const win = new FileWindow(fh, (await fh.stat()).size);
    let graph: FieldAt | undefined;
    for await (const f of fieldsOf(win, 0, win.size)) if (f.no === 7 && f.type === 2) graph = f;
    if (!graph) throw new WireError("not an ONNX model: no graph");
    const inputs: GraphValue[] = [];
    const outputs: GraphValue[] = [];
    const weights = new Set<string>();
    for await (const f of fieldsOf(win, graph.at, graph.at + graph.length)) {
      if (f.type !== 2) continue;
      if (f.no === 11 || f.no === 12) (f.no === 11 ? inputs : outputs).push(readValueInfo(await win.bytes(f.at, f.length)));
      else if (f.no === 5) {
        for await (const t of fieldsOf(win, f.at, f.at + f.length)) {
          if (t.no === 8 && t.type === 2) {
            weights.add(new TextDecoder().decode(await win.bytes(t.at, t.length)));
            break;
          }
        }
      }
    }
    return { inputs: inputs.filter((i) => !weights.has(i.name)), outputs };
  } finally {
    await fh.close();
  }
}
