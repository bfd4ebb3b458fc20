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
import type * as Ort from "onnxruntime-web";
import type { BoundModel } from "./model-card.ts";
import { CARD_DEFAULTS } from "./model-card.ts";
import { inputDivisor } from "./tensor.ts";
import { inputDims } from "./runner.ts";

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

// WebGPU's buffer usage and map mode bits (fixed by the spec).
const MAP_READ = 0x1;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const UNIFORM = 0x40;
const STORAGE = 0x80;
const MAP_MODE_READ = 0x1;

const WORKGROUP = 256;
/** WebGPU's guaranteed largest workgroup count in one dimension. */
const MAX_GROUPS_X = 65_535;

const SHADER = /* wgsl */ `
struct Params {
  plane: u32, nhwc: u32, rowGroups: u32, src0: u32, src1: u32, src2: u32, pad0: u32, pad1: u32,
  a: vec4<f32>, b: vec4<f32>,
}
@group(0) @binding(0) var<storage, read> rgb: array<u32>;
@group(0) @binding(1) var<storage, read_write> tensor: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

fn byteAt(i: u32) -> f32 {
  return f32((rgb[i >> 2u] >> ((i & 3u) * 8u)) & 255u);
}

@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x + id.y * p.rowGroups * ${WORKGROUP}u;
  if (i >= p.plane) { return; }
  let j = i * 3u;
  let v0 = byteAt(j + p.src0) * p.a.x + p.b.x;
  let v1 = byteAt(j + p.src1) * p.a.y + p.b.y;
  let v2 = byteAt(j + p.src2) * p.a.z + p.b.z;
  if (p.nhwc == 1u) {
    tensor[j] = v0;
    tensor[j + 1u] = v1;
    tensor[j + 2u] = v2;
  } else {
    tensor[i] = v0;
    tensor[p.plane + i] = v1;
    tensor[2u * p.plane + i] = v2;
  }
}`;

/** The buffers of one input size, made at its first run and kept while runs keep that size. */
interface SizeBuffers {
  key: string;
  rgb: GpuBuffer;
  tensor: GpuBuffer;
  params: GpuBuffer;
  bindGroup: unknown;
  groups: [number, number];
  feed: Ort.Tensor;
  /** The picture's bytes as written when they cannot go up as they are: padded to WebGPU's 4-byte write granularity. */
  staging?: Uint8Array;
  stagingBytes: number;
  /** Whether a run's bytes go up as they are (a whole number of 4-byte words, in unshared memory). */
  direct: (rgb: Uint8Array) => boolean;
}

export interface WebGpuIo {
  /** RGB bytes at `width` × `height` in; the card's output values back on the CPU. */
  run(rgb: Uint8Array, height: number, width: number): Promise<Float32Array>;
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
  let sized: SizeBuffers | undefined;
  let readBack: GpuBuffer | undefined;

  const release = (b: SizeBuffers) => {
    b.feed.dispose();
    for (const buf of [b.rgb, b.tensor, b.params]) buf.destroy();
  };

  const buffersFor = (height: number, width: number): SizeBuffers => {
    const key = `${width}x${height}`;
    if (sized?.key === key) return sized;
    if (sized) release(sized);
    const plane = width * height;
    const rgbBytes = Math.ceil((plane * 3) / 4) * 4;
    const rgb = device.createBuffer({ size: rgbBytes, usage: STORAGE | COPY_DST });
    const tensor = device.createBuffer({ size: plane * 3 * 4, usage: STORAGE | COPY_SRC | COPY_DST });
    const params = device.createBuffer({ size: 64, usage: UNIFORM | COPY_DST });
    const total = Math.ceil(plane / WORKGROUP);
    const groups: [number, number] = total <= MAX_GROUPS_X ? [total, 1] : [MAX_GROUPS_X, Math.ceil(total / MAX_GROUPS_X)];
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [rgb, tensor, params].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const feed = ort.Tensor.fromGpuBuffer(tensor as never, { dataType: "float32", dims: inputDims(model, height, width) });
    sized = {
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
      direct: (bytes) => rgbBytes === plane * 3 && !(bytes.buffer instanceof SharedArrayBuffer),
    };
    return sized;
  };

  return {
    async run(rgb, height, width) {
      const b = buffersFor(height, width);
      device.queue.writeBuffer(b.params, 0, paramsFor(model, rgb, width * height, b.groups[0]));
      let upload = rgb;
      if (!b.direct(rgb)) {
        b.staging ??= new Uint8Array(b.stagingBytes);
        b.staging.set(rgb);
        upload = b.staging;
      }
      device.queue.writeBuffer(b.rgb, 0, upload);
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
        // An output left on the CPU after all (another runtime's choice), or not float32, is
        // read by ORT as the CPU-tensor feed reads it.
        if (tensor.location !== "gpu-buffer" || tensor.type !== "float32") return Float32Array.from((await tensor.getData()) as ArrayLike<number>);
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
          return new Float32Array(readBack.getMappedRange().slice(0, bytes));
        } finally {
          readBack.unmap();
        }
      } finally {
        tensor.dispose();
      }
    },
    dispose() {
      if (sized) release(sized);
      sized = undefined;
      readBack?.destroy();
      readBack = undefined;
    },
  };
}

/** The shader's uniforms: the plane, the layout, the channel order and each channel's a and b. */
function paramsFor(model: BoundModel, rgb: Uint8Array, plane: number, rowGroups: number): Uint8Array {
  const buf = new ArrayBuffer(64);
  const u = new Uint32Array(buf, 0, 8);
  const f = new Float32Array(buf, 32, 8);
  const bgr = (model.channels ?? CARD_DEFAULTS.channels) === "BGR";
  u.set([plane, model.layout === "NHWC" ? 1 : 0, rowGroups, ...(bgr ? [2, 1, 0] : [0, 1, 2])]);
  const divisor = inputDivisor(rgb, model.scale);
  for (let c = 0; c < 3; c++) {
    f[c] = 1 / (divisor * model.std[c]!);
    f[4 + c] = -model.mean[c]! / model.std[c]!;
  }
  return new Uint8Array(buf);
}
