// Element-wise steps on NCHW views: a + b, and one-input functions (relu, sigmoid, and copy,
// which writes a tensor into a concatenation it could not be written into in place). One
// invocation an element; every view has its own offset and batch stride.
import type { PlanStep } from "../graph-plan.ts";
import { FLAT_INDEX, HEADER, PARAM_HEAD, type Kernel } from "./kernel.ts";

type AddStep = Extract<PlanStep, { kind: "add" }>;
type UnaryStep = Extract<PlanStep, { kind: "unary" }>;

const UNARY = { copy: 0, relu: 1, sigmoid: 2 } as const;

const STRUCT = /* wgsl */ `
struct Params {
  ${PARAM_HEAD}
  perPicture: u32, outOff: u32, outBatch: u32, aOff: u32, aBatch: u32, bOff: u32, bBatch: u32, func: u32,
}
@group(0) @binding(2) var<uniform> p: Params;
${FLAT_INDEX}`;

const ADD_WGSL = /* wgsl */ `${HEADER}${STRUCT}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = flatIndex(id);
  if (i >= p.total) { return; }
  let n = i / p.perPicture;
  let j = i % p.perPicture;
  act[p.outOff + n * p.outBatch + j] = act[p.aOff + n * p.aBatch + j] + act[p.bOff + n * p.bBatch + j];
}`;

const UNARY_WGSL = /* wgsl */ `${HEADER}${STRUCT}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = flatIndex(id);
  if (i >= p.total) { return; }
  let n = i / p.perPicture;
  let j = i % p.perPicture;
  let v = act[p.aOff + n * p.aBatch + j];
  var r = v;
  if (p.func == ${UNARY.relu}u) { r = max(v, 0.0); }
  if (p.func == ${UNARY.sigmoid}u) { r = 1.0 / (1.0 + exp(-v)); }
  act[p.outOff + n * p.outBatch + j] = r;
}`;

const perPicture = (v: { channels: number; height: number; width: number }) => v.channels * v.height * v.width;

export const add: Kernel<AddStep> = {
  name: "add",
  constants: false,
  wgsl: ADD_WGSL,
  params({ a, b, output }, pictures) {
    return { items: perPicture(output) * pictures, words: [perPicture(output), output.offset, output.batchStride, a.offset, a.batchStride, b.offset, b.batchStride, 0] };
  },
};

export const unary: Kernel<UnaryStep> = {
  name: "unary",
  constants: false,
  wgsl: UNARY_WGSL,
  params({ fn, input, output }, pictures) {
    return { items: perPicture(output) * pictures, words: [perPicture(output), output.offset, output.batchStride, input.offset, input.batchStride, 0, 0, UNARY[fn]] };
  },
};
