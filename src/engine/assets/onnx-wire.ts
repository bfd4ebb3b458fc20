// The protobuf wire format, just enough to read and rewrite an ONNX file: a message is a
// list of fields in file order; varints (wire type 0) keep their value, fixed 32/64-bit
// and length-delimited fields (types 5, 1, 2) keep their bytes. Writing the list back
// gives the same bytes, so a rewrite touches only the fields it replaces. Sub-messages
// stay bytes until a caller parses them (onnx-graph.ts knows which fields are messages).
export interface WireField {
  no: number;
  /** 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
  type: 0 | 1 | 2 | 5;
  /** Type 0: the value (unsigned; negative int64 arrive as 2^64 - |n|). */
  int?: bigint;
  /** Types 1, 2, 5: the payload (a view into the input, not a copy). */
  bytes?: Uint8Array;
}

export class WireError extends Error {
  override name = "WireError";
}

/** The varint at `pos`: its value and the position after it. */
export function readVarint(buf: Uint8Array, pos: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new WireError("truncated varint");
    const b = buf[pos++]!;
    value |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return [value, pos];
    shift += 7n;
    if (shift > 63n) throw new WireError("varint longer than 10 bytes");
  }
}

/** The fields of one message, in order. */
export function readFields(buf: Uint8Array): WireField[] {
  const out: WireField[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, p] = readVarint(buf, pos);
    pos = p;
    const no = Number(key >> 3n);
    const type = Number(key & 7n);
    if (type === 0) {
      const [v, q] = readVarint(buf, pos);
      out.push({ no, type, int: v });
      pos = q;
    } else if (type === 1 || type === 5) {
      const n = type === 1 ? 8 : 4;
      if (pos + n > buf.length) throw new WireError("truncated fixed field");
      out.push({ no, type, bytes: buf.subarray(pos, pos + n) });
      pos += n;
    } else if (type === 2) {
      const [len, q] = readVarint(buf, pos);
      const end = q + Number(len);
      if (end > buf.length) throw new WireError(`field ${no}: length ${len} runs past the message`);
      out.push({ no, type, bytes: buf.subarray(q, end) });
      pos = end;
    } else {
      throw new WireError(`unsupported wire type ${type} (field ${no})`);
    }
  }
  return out;
}

function varintBytes(v: bigint): number[] {
  const out: number[] = [];
  let x = BigInt.asUintN(64, v);
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
}

/** Encodes fields in the order given. */
export function writeFields(fields: readonly WireField[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const push = (p: Uint8Array) => {
    parts.push(p);
    total += p.length;
  };
  for (const f of fields) {
    push(Uint8Array.from(varintBytes(BigInt((f.no << 3) | f.type))));
    if (f.type === 0) push(Uint8Array.from(varintBytes(f.int ?? 0n)));
    else {
      const b = f.bytes ?? new Uint8Array(0);
      if (f.type === 2) push(Uint8Array.from(varintBytes(BigInt(b.length))));
      push(b);
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
export const intField = (no: number, v: number | bigint): WireField => ({ no, type: 0, int: BigInt.asUintN(64, BigInt(v)) });
export const bytesField = (no: number, bytes: Uint8Array): WireField => ({ no, type: 2, bytes });
export const strField = (no: number, s: string): WireField => bytesField(no, enc.encode(s));
export const msgField = (no: number, fields: readonly WireField[]): WireField => bytesField(no, writeFields(fields));
export const fieldString = (f: WireField): string => dec.decode(f.bytes);
/** A varint read as a signed 64-bit value (ONNX int64 fields). */
export const fieldInt = (f: WireField): number => Number(BigInt.asIntN(64, f.int ?? 0n));
