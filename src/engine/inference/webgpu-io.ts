// A WebGPU session's input and output kept on the GPU. Fed a CPU tensor, ONNX Runtime makes
// a 12 MB float32 tensor on the CPU (1024², 3 channels), uploads it through a staging buffer
// of its own each run and, for a CPU output, copies the mask into a new read-back buffer
// and waits on it. Here the picture goes up as it is (3 bytes a pixel, a quarter of the
// float tensor), a compute pass turns it into the model's input in a GPU buffer made once
// per input size, the session reads that buffer and leaves its output on the GPU, and the
// mask comes back through one read-back buffer kept from run to run: per run one write,
// one dispatch, one copy and one wait, with no buffer created.
//
// The arithmetic is rgbToTensor's (tensor.ts): value = byte × a + b per channel, with
// a = 1 / (divisor × std) and b = −mean / std, in the card's channel order and layout.
//
// A graph that takes batches (BoundModel.batches) runs several pictures of one size at once:
// they go up one after another in one buffer, the pass fills one input tensor with all of
// them, and the masks come back in one read-back, one run's fixed cost shared.
import type * as Ort from "onnxruntime-web";
import type { BoundModel } from "./model-card.ts";
import { CARD_DEFAULTS } from "./model-card.ts";
import { inputDivisor } from "./tensor.ts";
import { inputDims } from "./runner.ts";
import { COPY_DST, COPY_SRC, MAP_MODE_READ, MAP_READ, STORAGE, UNIFORM } from "./webgpu-bits.ts";

// The few WebGPU shapes used here, structurally (the project has no WebGPU type package:
// Node has no WebGPU, and Deno's types are not in tsc's view).
interface GpuBuffer {
  size: number;
  mapAsync(mode: number): Promise<void>;
  getMappedRange(): ArrayBuffer;
  unmap(): void;
  destroy(): void;
}
interface GpuDevice {
  createBuffer(d: { size: number; usage: number }): GpuBuffer;
  createShaderModule(d: { code: string }): unknown;
  createComputePipeline(d: { layout: "auto"; compute: { module: unknown; entryPoint: string } }): { getBindGroupLayout(i: number): unknown };
  createBindGroup(d: { layout: unknown; entries: { binding: number; resource: { buffer: GpuBuffer } }[] }): unknown;
  createCommandEncoder(): {
    beginComputePass(): { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number, y?: number): void; end(): void };
    copyBufferToBuffer(src: GpuBuffer, so: number, dst: GpuBuffer, doff: number, size: number): void;
    finish(): unknown;
  };
  queue: { writeBuffer(b: GpuBuffer, offset: number, data: ArrayBufferView): void; submit(c: unknown[]): void };
}


const WORKGROUP = 256;
/** WebGPU's guaranteed largest workgroup count in one dimension. */
const MAX_GROUPS_X = 65_535;

const SHADER = /* wgsl */ `
struct Params {
  plane: u32, nhwc: u32, rowGroups: u32, src0: u32, src1: u32, src2: u32, total: u32, pad1: u32,
  a: vec4<f32>, b: vec4<f32>,
}
@group(0) @binding(0) var<storage, read> rgb: array<u32>;
@group(0) @binding(1) var<storage, read_write> tensor: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

fn byteAt(i: u32) -> f32 {
  return f32((rgb[i >> 2u] >> ((i & 3u) * 8u)) & 255u);
}

// One invocation a pixel of the batch: the pictures lie one after another, so pixel i's
// bytes start at 3i whichever picture it is in.
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x + id.y * p.rowGroups * ${WORKGROUP}u;
  if (i >= p.total) { return; }
  let j = i * 3u;
  let v0 = byteAt(j + p.src0) * p.a.x + p.b.x;
  let v1 = byteAt(j + p.src1) * p.a.y + p.b.y;
  let v2 = byteAt(j + p.src2) * p.a.z + p.b.z;
  if (p.nhwc == 1u) {
    tensor[j] = v0;
    tensor[j + 1u] = v1;
    tensor[j + 2u] = v2;
  } else {
    let picture = i / p.plane;
    let at = picture * 2u * p.plane + i;
    tensor[at] = v0;
    tensor[p.plane + at] = v1;
    tensor[2u * p.plane + at] = v2;
  }
}`;

/** The buffers of one batch shape (pictures × size), made at its first run and kept for later ones. */
interface ShapeBuffers {
  key: string;
  rgb: GpuBuffer;
  tensor: GpuBuffer;
  params: GpuBuffer;
  bindGroup: unknown;
  groups: [number, number];
  feed: Ort.Tensor;
  /** The pictures' bytes as written when they cannot go up as they are: padded to WebGPU's 4-byte write granularity. */
  staging?: Uint8Array;
  stagingBytes: number;
  /** Whether a picture's bytes go up as they are (a whole number of 4-byte words, in unshared memory). */
  direct: (rgb: Uint8Array) => boolean;
}

/** Batch shapes kept at once: a busy service alternates between a few (one picture, a full batch). */
const KEPT_SHAPES = 4;

export interface WebGpuIo {
  /** RGB bytes at `width` × `height` in, one picture after another; each one's output values back on the CPU. */
  run(pictures: readonly Uint8Array[], height: number, width: number): Promise<Float32Array[]>;
  dispose(): void;
}

/** Session options that leave the card's output on the GPU (read back by WebGpuIo). */
export const outputOnGpu = (model: Pick<BoundModel, "outputName">): Pick<Ort.InferenceSession.SessionOptions, "preferredOutputLocation"> => ({
  preferredOutputLocation: { [model.outputName]: "gpu-buffer" },
});

/**
 * Binds `session` (started with outputOnGpu) to GPU buffers on ORT's own device. Throws when
 * the runtime does not offer one; the caller then feeds CPU tensors instead.
 */
export async function createWebGpuIo(ort: typeof Ort, session: Ort.InferenceSession, model: BoundModel): Promise<WebGpuIo> {
  const device = (await ort.env.webgpu.device) as unknown as GpuDevice | undefined;
  if (!device?.createComputePipeline) throw new Error("onnxruntime-web offers no WebGPU device");
  const pipeline = device.createComputePipeline({ layout: "auto", compute: { module: device.createShaderModule({ code: SHADER }), entryPoint: "main" } });
  // Most recently used last.
  const shapes: ShapeBuffers[] = [];
  let readBack: GpuBuffer | undefined;

  const release = (b: ShapeBuffers) => {
    b.feed.dispose();
    for (const buf of [b.rgb, b.tensor, b.params]) buf.destroy();
  };

  const buffersFor = (pictures: number, height: number, width: number): ShapeBuffers => {
    const key = `${pictures}x${width}x${height}`;
    const at = shapes.findIndex((b) => b.key === key);
    if (at >= 0) {
      const found = shapes.splice(at, 1)[0]!;
      shapes.push(found);
      return found;
    }
    if (shapes.length >= KEPT_SHAPES) release(shapes.shift()!);
    const plane = width * height;
    const total = pictures * plane;
    const rgbBytes = Math.ceil((total * 3) / 4) * 4;
    const rgb = device.createBuffer({ size: rgbBytes, usage: STORAGE | COPY_DST });
    const tensor = device.createBuffer({ size: total * 3 * 4, usage: STORAGE | COPY_SRC | COPY_DST });
    const params = device.createBuffer({ size: 64, usage: UNIFORM | COPY_DST });
    const groupCount = Math.ceil(total / WORKGROUP);
    const groups: [number, number] = groupCount <= MAX_GROUPS_X ? [groupCount, 1] : [MAX_GROUPS_X, Math.ceil(groupCount / MAX_GROUPS_X)];
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [rgb, tensor, params].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const feed = ort.Tensor.fromGpuBuffer(tensor as never, { dataType: "float32", dims: inputDims(model, height, width, pictures) });
    const made: ShapeBuffers = {
      key,
      rgb,
      tensor,
      params,
      bindGroup,
      groups,
      feed,
      stagingBytes: rgbBytes,
      // A view of shared memory (the pipeline's band arena) is copied first: WebGPU
      // implementations differ on whether writeBuffer takes one.
      direct: (bytes) => (plane * 3) % 4 === 0 && !(bytes.buffer instanceof SharedArrayBuffer),
    };
    shapes.push(made);
    return made;
  };

  return {
    async run(pictures, height, width) {
      const n = pictures.length;
      const plane = width * height;
      const b = buffersFor(n, height, width);
      device.queue.writeBuffer(b.params, 0, paramsFor(model, pictures[0]!, plane, n * plane, b.groups[0]));
      if (pictures.every((p) => b.direct(p))) {
        pictures.forEach((p, k) => device.queue.writeBuffer(b.rgb, k * plane * 3, p));
      } else {
        b.staging ??= new Uint8Array(b.stagingBytes);
        pictures.forEach((p, k) => b.staging!.set(p, k * plane * 3));
        device.queue.writeBuffer(b.rgb, 0, b.staging);
      }
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, b.bindGroup);
      pass.dispatchWorkgroups(b.groups[0], b.groups[1]);
      pass.end();
      device.queue.submit([enc.finish()]);

      const out = await session.run({ [model.inputName]: b.feed }, [model.outputName]);
      const tensor = out[model.outputName];
      if (!tensor) throw new Error(`model returned no "${model.outputName}"`);
      try {
        const each = (all: Float32Array) => pictures.map((_, k) => all.subarray(k * plane, (k + 1) * plane));
        // An output left on the CPU after all (another runtime's choice), or not float32, is
        // read by ORT as the CPU-tensor feed reads it.
        if (tensor.location !== "gpu-buffer" || tensor.type !== "float32") return each(Float32Array.from((await tensor.getData()) as ArrayLike<number>));
        const bytes = tensor.size * 4;
        if (!readBack || readBack.size < bytes) {
          readBack?.destroy();
          readBack = device.createBuffer({ size: bytes, usage: MAP_READ | COPY_DST });
        }
        const copy = device.createCommandEncoder();
        copy.copyBufferToBuffer(tensor.gpuBuffer as unknown as GpuBuffer, 0, readBack, 0, bytes);
        device.queue.submit([copy.finish()]);
        await readBack.mapAsync(MAP_MODE_READ);
        try {
          return each(new Float32Array(readBack.getMappedRange().slice(0, bytes)));
        } finally {
          readBack.unmap();
        }
      } finally {
        tensor.dispose();
      }
    },
    dispose() {
      for (const b of shapes.splice(0)) release(b);
      readBack?.destroy();
      readBack = undefined;
    },
  };
}

/**
 * The shader's uniforms: the plane, the layout, the channel order, the batch's pixel count and
 * each channel's a and b. A card whose scale reads the picture ("max") is fed one picture a
 * run (the session never batches it), so one divisor serves the batch.
 */
function paramsFor(model: BoundModel, rgb: Uint8Array, plane: number, total: number, rowGroups: number): Uint8Array {
  const buf = new ArrayBuffer(64);
  const u = new Uint32Array(buf, 0, 8);
  const f = new Float32Array(buf, 32, 8);
  const bgr = (model.channels ?? CARD_DEFAULTS.channels) === "BGR";
  u.set([plane, model.layout === "NHWC" ? 1 : 0, rowGroups, ...(bgr ? [2, 1, 0] : [0, 1, 2]), total]);
  const divisor = inputDivisor(rgb, model.scale);
  for (let c = 0; c < 3; c++) {
    f[c] = 1 / (divisor * model.std[c]!);
    f[4 + c] = -model.mean[c]! / model.std[c]!;
  }
  return new Uint8Array(buf);
}
