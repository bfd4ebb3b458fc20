// Typed arrays in messages between our threads travel as their buffers plus where the view
// sits, and are rebuilt on arrival. Deno's node:worker_threads clones a typed array view
// element by element: a 48 MB Uint8Array took 79 s to reach a worker (a 16 MB view of
// shared memory 12 s), while the bare ArrayBuffer moved in 1 ms when transferred and the
// bare SharedArrayBuffer in 1-3 ms (Deno 2.9.5, measured here). A 12 MP cut-out under Deno
// took 547 s and 3.8 GB that way. Under Node the walk costs microseconds and the clone is
// the same: V8 copies a view's whole buffer either way.
const VIEW = "__pixeldropView";

const KINDS = {
  Uint8Array,
  Uint8ClampedArray,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;
type Kind = keyof typeof KINDS;

interface PackedView {
  [VIEW]: Kind | "DataView";
  buffer: ArrayBufferLike;
  byteOffset: number;
  length: number;
}

/** Our messages nest views a few levels down (job → image → planes); deeper is not ours. */
const MAX_DEPTH = 6;

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null || Array.isArray(v);
};

function kindOf(view: ArrayBufferView): Kind | "DataView" {
  if (view instanceof DataView) return "DataView";
  // A Node Buffer is a Uint8Array, and arrives as one (as a structured clone gives it).
  for (const name of Object.keys(KINDS) as Kind[]) if (view instanceof KINDS[name]) return name;
  throw new TypeError(`cannot send a ${view.constructor.name} between threads`);
}

/** `value` with every typed array (and DataView) replaced by its buffer and position. */
export function packViews<T>(value: T, depth = 0): T {
  if (ArrayBuffer.isView(value)) {
    const length = value instanceof DataView ? value.byteLength : (value as unknown as { length: number }).length;
    return { [VIEW]: kindOf(value), buffer: value.buffer, byteOffset: value.byteOffset, length } satisfies PackedView as T;
  }
  if (depth >= MAX_DEPTH || value === null || typeof value !== "object" || !isPlain(value)) return value;
  if (Array.isArray(value)) return value.map((v) => packViews(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = packViews(v, depth + 1);
  return out as T;
}

/** The inverse of packViews, on the receiving thread. */
export function unpackViews<T>(value: T, depth = 0): T {
  if (depth >= MAX_DEPTH || value === null || typeof value !== "object") return value;
  const packed = value as unknown as PackedView;
  if (typeof packed[VIEW] === "string") {
    if (packed[VIEW] === "DataView") return new DataView(packed.buffer, packed.byteOffset, packed.length) as T;
    return new KINDS[packed[VIEW]](packed.buffer as ArrayBuffer, packed.byteOffset, packed.length) as T;
  }
  if (!isPlain(value)) return value;
  if (Array.isArray(value)) return value.map((v) => unpackViews(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = unpackViews(v, depth + 1);
  return out as T;
}
