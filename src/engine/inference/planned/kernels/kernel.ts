// What every planned kernel shares: its bindings (the activation arena, read and written by
// every step; the step's constants, a convolution's weights; the step's parameters, a slice
// of one uniform buffer written once at plan time) and the flat invocation index (one
// invocation an output item, dispatched in rows of at most 65 535 workgroups).
import type { PlanStep } from "../graph-plan.ts";

export const WORKGROUP = 64;
/** Parameter words a step has (u32; floats stored as their bits). Words 0 and 1 are the header below. */
export const PARAM_WORDS = 32;

export const HEADER = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> act: array<f32>;
`;

/** The Params struct's first two fields, which every kernel's struct starts with. */
export const PARAM_HEAD = /* wgsl */ `total: u32, rowStride: u32,`;

/** An invocation's item number, or the total when it has none (the grid is rounded up). */
export const FLAT_INDEX = /* wgsl */ `
fn flatIndex(id: vec3<u32>) -> u32 {
  let i = id.x + id.y * p.rowStride;
  return select(p.total, i, i < p.total);
}`;

/** An item's output position (x, y, channel, picture) in an NCHW tensor of p.outW × p.outH × p.channels. */
export const NCHW_POSITION = /* wgsl */ `
  let ox = i % p.outW;
  let oy = (i / p.outW) % p.outH;
  let c = (i / (p.outW * p.outH)) % p.channels;
  let n = i / (p.outW * p.outH * p.channels);`;

export interface KernelParams {
  /** Items (invocations) the step runs. */
  items: number;
  /** Words 2.. of its parameters. */
  words: number[];
}

export interface Kernel<S extends PlanStep = PlanStep> {
  /** The pipeline's cache key. */
  name: string;
  /** Whether binding 1 holds the step's constants. */
  constants: boolean;
  wgsl: string;
  params(step: S, pictures: number): KernelParams;
}

export const f32Bits = (v: number): number => new Uint32Array(new Float32Array([v]).buffer)[0]!;
