// A GraphProgram laid out for one input shape (pictures × height × width): every tensor's
// shape, where it lives in one float32 arena (tensors placed by lifetime, so memory is
// reused once a tensor's last reader has run) and the steps a run records. A Concat costs
// nothing: the tensors it joins are written straight into their channel ranges of its
// output, so a tensor is a view (offset, batch stride) into the arena rather than a buffer.
import type { GraphProgram, ProgramOp } from "./graph-program.ts";

export interface TensorView {
  /** Element offset of picture 0, channel 0 in the arena. */
  offset: number;
  /** Elements from one picture to the next (the whole concatenation's, for a tensor written into one). */
  batchStride: number;
  channels: number;
  height: number;
  width: number;
}

export type PlanStep =
  | { kind: "conv"; op: Extract<ProgramOp, { op: "conv" }>; input: TensorView; output: TensorView }
  | { kind: "maxpool"; op: Extract<ProgramOp, { op: "maxpool" }>; input: TensorView; output: TensorView }
  | { kind: "resize"; op: Extract<ProgramOp, { op: "resize" }>; input: TensorView; output: TensorView }
  | { kind: "add"; a: TensorView; b: TensorView; output: TensorView }
  | { kind: "unary"; fn: "relu" | "sigmoid" | "copy"; input: TensorView; output: TensorView };

export interface GraphPlan {
  pictures: number;
  height: number;
  width: number;
  steps: PlanStep[];
  /** Arena size in float32 elements. */
  arenaElements: number;
  input: TensorView;
  output: TensorView;
}

type Shape = [number, number, number]; // channels, height, width

/** Arena offsets are kept 64-element (256-byte) aligned. */
const ALIGN = 64;

export class PlanError extends Error {}

function shapes(program: GraphProgram, height: number, width: number): Map<string, Shape> {
  const convDims = program.convWeights.map((w) => w.dims);
  const shape = new Map<string, Shape>([[program.input, [3, height, width]]]);
  const of = (name: string): Shape => {
    const s = shape.get(name);
    if (!s) throw new PlanError(`tensor ${name} is read before it is made`);
    return s;
  };
  const spatial = (len: number, k: number, s: number, d: number, p0: number, p1: number, ceil = false) => {
    const span = len + p0 + p1 - (d * (k - 1) + 1);
    let out = (ceil ? Math.ceil(span / s) : Math.floor(span / s)) + 1;
    // A last window must start inside the input or its left padding (ONNX, PyTorch).
    if (ceil && (out - 1) * s >= len + p0) out--;
    return out;
  };
  for (const o of program.ops) {
    let made: Shape;
    if (o.op === "conv") {
      const [c, h, w] = of(o.input);
      const [oc, ic, kh, kw] = convDims[o.weights]!;
      if (c !== ic) throw new PlanError(`conv ${o.output}: ${c} channels in, weights take ${ic}`);
      made = [oc, spatial(h, kh, o.strides[0], o.dilations[0], o.pads[0], o.pads[2]), spatial(w, kw, o.strides[1], o.dilations[1], o.pads[1], o.pads[3])];
    } else if (o.op === "maxpool") {
      const [c, h, w] = of(o.input);
      made = [c, spatial(h, o.kernel[0], o.strides[0], 1, o.pads[0], o.pads[2], o.ceil), spatial(w, o.kernel[1], o.strides[1], 1, o.pads[1], o.pads[3], o.ceil)];
    } else if (o.op === "resize") {
      const [c, h, w] = of(o.input);
      made = [c, Math.floor(h * o.scales[0]), Math.floor(w * o.scales[1])];
    } else if (o.op === "add") {
      const a = of(o.inputs[0]);
      const b = of(o.inputs[1]);
      if (a.join() !== b.join()) throw new PlanError(`add ${o.output}: shapes ${a} and ${b} differ (no broadcasting planned)`);
      made = a;
    } else if (o.op === "concat") {
      const parts = o.inputs.map(of);
      if (parts.some((p) => p[1] !== parts[0]![1] || p[2] !== parts[0]![2])) throw new PlanError(`concat ${o.output}: sizes differ`);
      made = [parts.reduce((s, p) => s + p[0], 0), parts[0]![1], parts[0]![2]];
    } else made = of(o.input);
    if (made.some((d) => !(d >= 1))) throw new PlanError(`tensor ${o.output} would be empty at ${height}x${width}`);
    shape.set(o.output, made);
  }
  return shape;
}

/** The plan of `program` for `pictures` pictures of height × width. Throws PlanError for a shape it cannot take. */
export function planGraph(program: GraphProgram, pictures: number, height: number, width: number): GraphPlan {
  const shape = shapes(program, height, width);
  // Where each tensor lives: inside a concatenation's output (parent, first channel), or its own root.
  const parent = new Map<string, { name: string; channel: number }>();
  const concats = program.ops.filter((o) => o.op === "concat");
  const copies = new Map<string, { from: string; channel: number }[]>();
  for (const c of concats) {
    let channel = 0;
    const seen = new Set<string>();
    for (const i of c.inputs) {
      const inPlace = i !== program.input && i !== program.output && !parent.has(i) && !seen.has(i);
      if (inPlace) parent.set(i, { name: c.output, channel });
      else copies.set(c.output, [...(copies.get(c.output) ?? []), { from: i, channel }]);
      seen.add(i);
      channel += shape.get(i)![0];
    }
  }
  const rootOf = (name: string): { root: string; channel: number } => {
    let channel = 0;
    let n = name;
    for (let p = parent.get(n); p; p = parent.get(n)) {
      channel += p.channel;
      n = p.name;
    }
    return { root: n, channel };
  };

  // Steps in graph order; a concatenation adds only the copies of inputs not written in place.
  type Pending = { make: (view: (n: string) => TensorView) => PlanStep; reads: string[]; writes: string };
  const pending: Pending[] = [];
  for (const o of program.ops) {
    if (o.op === "concat") {
      for (const c of copies.get(o.output) ?? []) {
        pending.push({ reads: [c.from], writes: o.output, make: (v) => ({ kind: "unary", fn: "copy", input: v(c.from), output: channelRange(v(o.output), c.channel, shape.get(c.from)![0]) }) });
      }
    } else if (o.op === "add") pending.push({ reads: o.inputs, writes: o.output, make: (v) => ({ kind: "add", a: v(o.inputs[0]), b: v(o.inputs[1]), output: v(o.output) }) });
    else if (o.op === "relu" || o.op === "sigmoid") pending.push({ reads: [o.input], writes: o.output, make: (v) => ({ kind: "unary", fn: o.op as "relu" | "sigmoid", input: v(o.input), output: v(o.output) }) });
    else pending.push({ reads: [o.input], writes: o.output, make: (v) => ({ kind: o.op, op: o, input: v(o.input), output: v(o.output) }) as PlanStep });
  }

  // Each root's lifetime in steps: from its first write to its last read (the input before
  // the first step, the output to the end).
  const first = new Map<string, number>([[program.input, -1]]);
  const last = new Map<string, number>([[program.output, Infinity]]);
  pending.forEach((p, s) => {
    const w = rootOf(p.writes).root;
    if (!first.has(w)) first.set(w, s);
    for (const r of p.reads) last.set(rootOf(r).root, Math.max(last.get(rootOf(r).root) ?? s, s));
  });
  for (const [root, s] of first) if (!last.has(root)) last.set(root, s);
  const rootSize = (root: string) => {
    const [c, h, w] = shape.get(root)!;
    return c * h * w;
  };

  // First-fit placement in one arena, freeing a root after its last reader.
  const base = new Map<string, number>();
  let free: { start: number; size: number }[] = [];
  let arena = 0;
  const place = (root: string) => {
    const size = Math.ceil((rootSize(root) * pictures) / ALIGN) * ALIGN;
    const at = free.findIndex((f) => f.size >= size);
    if (at >= 0) {
      const f = free[at]!;
      base.set(root, f.start);
      if (f.size === size) free.splice(at, 1);
      else free[at] = { start: f.start + size, size: f.size - size };
    } else {
      base.set(root, arena);
      arena += size;
    }
  };
  const release = (root: string) => {
    const size = Math.ceil((rootSize(root) * pictures) / ALIGN) * ALIGN;
    free.push({ start: base.get(root)!, size });
    free.sort((a, b) => a.start - b.start);
    free = free.reduce<{ start: number; size: number }[]>((m, f) => {
      const prev = m[m.length - 1];
      if (prev && prev.start + prev.size === f.start) prev.size += f.size;
      else m.push({ ...f });
      return m;
    }, []);
  };
  const byFirst = [...first.entries()].sort((a, b) => a[1] - b[1]);
  const byLast = [...last.entries()].sort((a, b) => a[1] - b[1]);
  let fi = 0;
  let li = 0;
  for (let s = -1; s < pending.length; s++) {
    while (fi < byFirst.length && byFirst[fi]![1] <= s) place(byFirst[fi++]![0]);
    while (li < byLast.length && byLast[li]![1] <= s) release(byLast[li++]![0]);
  }

  const view = (name: string): TensorView => {
    const { root, channel } = rootOf(name);
    const [c, h, w] = shape.get(name)!;
    const rootChannels = shape.get(root)![0];
    return { offset: base.get(root)! + channel * h * w, batchStride: rootChannels * h * w, channels: c, height: h, width: w };
  };
  return {
    pictures,
    height,
    width,
    steps: pending.map((p) => p.make(view)),
    arenaElements: arena,
    input: view(program.input),
    output: view(program.output),
  };
}

function channelRange(v: TensorView, channel: number, channels: number): TensorView {
  return { ...v, offset: v.offset + channel * v.height * v.width, channels };
}
