// The one file that talks to WebGPU for a planned run: it uploads a GraphProgram's weights
// once, makes each kernel's pipeline once, and for each input shape it is asked for makes
// the arena, every step's parameters (one uniform buffer, written once) and every step's
// bind group. A run is then one write of the input, one command encoder, one compute pass
// (a pipeline change, a bind group and a dispatch a step), one copy of the mask into a
// read-back buffer, one submit and one wait.
import { COPY_DST, COPY_SRC, MAP_MODE_READ, MAP_READ, SHADER_COMPUTE, STORAGE, UNIFORM } from "../webgpu-bits.ts";
import type { GraphProgram } from "./graph-program.ts";
import { PlanError, planGraph, type GraphPlan, type PlanStep } from "./graph-plan.ts";
import { PARAM_WORDS, WORKGROUP, type Kernel } from "./kernels/kernel.ts";
import { conv2d, packConvWeights } from "./kernels/conv2d.ts";
import { maxPool } from "./kernels/max-pool.ts";
import { resizeBilinear } from "./kernels/resize-bilinear.ts";
import { add, unary } from "./kernels/elementwise.ts";

// The WebGPU shapes used here, structurally (no WebGPU type package is in tsc's view).
export interface GpuBuffer {
  size: number;
  mapAsync(mode: number): Promise<void>;
  getMappedRange(): ArrayBuffer;
  unmap(): void;
  destroy(): void;
}
interface ComputePass {
  setPipeline(p: unknown): void;
  setBindGroup(i: number, g: unknown): void;
  dispatchWorkgroups(x: number, y?: number): void;
  end(): void;
}
export interface GpuDevice {
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number; minUniformBufferOffsetAlignment: number; maxComputeWorkgroupsPerDimension: number };
  createBuffer(d: { size: number; usage: number; mappedAtCreation?: boolean }): GpuBuffer;
  createShaderModule(d: { code: string }): unknown;
  createBindGroupLayout(d: { entries: { binding: number; visibility: number; buffer: { type: string } }[] }): unknown;
  createPipelineLayout(d: { bindGroupLayouts: unknown[] }): unknown;
  createComputePipeline(d: { layout: unknown; compute: { module: unknown; entryPoint: string } }): unknown;
  createBindGroup(d: { layout: unknown; entries: { binding: number; resource: { buffer: GpuBuffer; offset?: number; size?: number } }[] }): unknown;
  createCommandEncoder(): { beginComputePass(): ComputePass; copyBufferToBuffer(src: GpuBuffer, so: number, dst: GpuBuffer, doff: number, size: number): void; finish(): unknown };
  queue: { writeBuffer(b: GpuBuffer, offset: number, data: ArrayBufferView): void; submit(c: unknown[]): void };
  pushErrorScope(filter: string): void;
  popErrorScope(): Promise<{ message: string } | null>;
  destroy(): void;
}


const NO_VALUES = new Float32Array(0);

const KERNELS: Record<PlanStep["kind"], Kernel<never>> = { conv: conv2d, maxpool: maxPool, resize: resizeBilinear, add, unary };

/** What one input shape's runs reuse: the plan, its buffers and its recorded steps. */
export interface PreparedShape {
  key: string;
  plan: GraphPlan;
  arena: GpuBuffer;
  params: GpuBuffer;
  readBack: GpuBuffer;
  steps: { pipeline: unknown; group: unknown; groups: [number, number] }[];
}

export class PlannedBackend {
  readonly #device: GpuDevice;
  readonly #program: GraphProgram;
  readonly #layout: unknown;
  readonly #pipelines = new Map<string, unknown>();
  readonly #weights: GpuBuffer[];
  readonly #none: GpuBuffer;

  constructor(device: GpuDevice, program: GraphProgram) {
    this.#device = device;
    // The weights live on the GPU from here on; plans need only their shapes.
    this.#program = { ...program, convWeights: program.convWeights.map((w) => ({ dims: w.dims, values: NO_VALUES, bias: NO_VALUES })) };
    this.#layout = device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: SHADER_COMPUTE, buffer: { type: "storage" } },
        { binding: 1, visibility: SHADER_COMPUTE, buffer: { type: "read-only-storage" } },
        { binding: 2, visibility: SHADER_COMPUTE, buffer: { type: "uniform" } },
      ],
    });
    const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [this.#layout] });
    for (const k of Object.values(KERNELS)) {
      this.#pipelines.set(k.name, device.createComputePipeline({ layout: pipelineLayout, compute: { module: device.createShaderModule({ code: k.wgsl }), entryPoint: "main" } }));
    }
    this.#weights = program.convWeights.map((w) => this.#upload(packConvWeights(w)));
    this.#none = device.createBuffer({ size: 16, usage: STORAGE });
  }

  #upload(values: Float32Array): GpuBuffer {
    const buffer = this.#device.createBuffer({ size: Math.max(16, values.byteLength), usage: STORAGE | COPY_DST });
    this.#device.queue.writeBuffer(buffer, 0, values);
    return buffer;
  }

  /** Plans `pictures` × height × width and makes its GPU objects. Throws PlanError when the device cannot hold it. */
  prepare(pictures: number, height: number, width: number): PreparedShape {
    const device = this.#device;
    const plan = planGraph(this.#program, pictures, height, width);
    const arenaBytes = plan.arenaElements * 4;
    if (arenaBytes > device.limits.maxStorageBufferBindingSize) {
      throw new PlanError(`${pictures}×${height}×${width} needs ${Math.ceil(arenaBytes / 2 ** 20)} MiB of activations in one binding; the device binds ${Math.floor(device.limits.maxStorageBufferBindingSize / 2 ** 20)} MiB`);
    }
    const arena = device.createBuffer({ size: arenaBytes, usage: STORAGE | COPY_SRC | COPY_DST });
    const slot = Math.max(256, device.limits.minUniformBufferOffsetAlignment);
    const params = device.createBuffer({ size: slot * plan.steps.length, usage: UNIFORM | COPY_DST });
    const words = new Uint32Array((slot / 4) * plan.steps.length);
    const maxX = device.limits.maxComputeWorkgroupsPerDimension;
    const steps = plan.steps.map((step, s) => {
      const kernel = KERNELS[step.kind] as Kernel<typeof step>;
      const { items, words: own } = kernel.params(step, pictures);
      const groupCount = Math.ceil(items / WORKGROUP);
      const groups: [number, number] = groupCount <= maxX ? [groupCount, 1] : [maxX, Math.ceil(groupCount / maxX)];
      if (own.length + 2 > PARAM_WORDS) throw new Error(`${kernel.name}: ${own.length + 2} parameter words, the slot holds ${PARAM_WORDS}`);
      words.set([items, groups[0] * WORKGROUP, ...own], (slot / 4) * s);
      const constants = step.kind === "conv" ? this.#weights[step.op.weights]! : this.#none;
      const group = device.createBindGroup({
        layout: this.#layout,
        entries: [
          { binding: 0, resource: { buffer: arena } },
          { binding: 1, resource: { buffer: constants } },
          { binding: 2, resource: { buffer: params, offset: slot * s, size: PARAM_WORDS * 4 } },
        ],
      });
      return { pipeline: this.#pipelines.get(kernel.name)!, group, groups };
    });
    device.queue.writeBuffer(params, 0, words);
    const outBytes = plan.output.batchStride * pictures * 4;
    const readBack = device.createBuffer({ size: outBytes, usage: MAP_READ | COPY_DST });
    return { key: `${pictures}x${height}x${width}`, plan, arena, params, readBack, steps };
  }

  /** One run: `input` (pictures × 3 × height × width, NCHW) in, the output tensor's values back. */
  async run(shape: PreparedShape, input: Float32Array): Promise<Float32Array> {
    const device = this.#device;
    const { plan } = shape;
    device.queue.writeBuffer(shape.arena, plan.input.offset * 4, input);
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    let current: unknown;
    for (const s of shape.steps) {
      if (s.pipeline !== current) pass.setPipeline((current = s.pipeline));
      pass.setBindGroup(0, s.group);
      pass.dispatchWorkgroups(s.groups[0], s.groups[1]);
    }
    pass.end();
    encoder.copyBufferToBuffer(shape.arena, plan.output.offset * 4, shape.readBack, 0, shape.readBack.size);
    device.queue.submit([encoder.finish()]);
    await shape.readBack.mapAsync(MAP_MODE_READ);
    try {
      return new Float32Array(shape.readBack.getMappedRange().slice(0));
    } finally {
      shape.readBack.unmap();
    }
  }

  release(shape: PreparedShape): void {
    for (const b of [shape.arena, shape.params, shape.readBack]) b.destroy();
  }

  dispose(): void {
    for (const b of [...this.#weights, this.#none]) b.destroy();
  }
}
