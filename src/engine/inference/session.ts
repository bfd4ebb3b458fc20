// A mask session: RGB bytes at the model's input size in, a 0..255 mask of the same size
// out. It hides which backend runs the model and owns the pre/post-processing the
// manifest describes. Resizing to and from the input size is the imaging module's job.
import { InferenceError, messageOf } from "./errors.ts";
import type { BoundModel } from "./model-card.ts";
import { createStubRunner } from "./backend-stub.ts";
import { outputToMask, rgbToTensor } from "./tensor.ts";
import type { TensorRunner, WebGpuFeed, WebGpuRun } from "./runner.ts";

export type BackendChoice = "auto" | "wasm" | "webgpu" | "native" | "stub";
export type ActiveBackend = "wasm" | "webgpu" | "native" | "stub";

export interface MaskSessionOptions {
  /** The card checked against the graph (a manifest entry is one). */
  model: BoundModel;
  /** The .onnx file (resolveModel gives it). Unused by the stub. */
  modelPath: string;
  backend: BackendChoice;
  /** WebAssembly threads or native intra-op threads for this session. */
  threads: number;
  /** Directory holding the onnxruntime-web runtime files (wasm/). */
  wasmDir: string;
  /** Stub only: how long each run takes. */
  stubDelayMs?: number;
  /** WebGPU only: how the session is fed (runner.ts); default "gpu-buffers". */
  webgpuFeed?: WebGpuFeed;
  /** WebGPU only: who runs the graph (runner.ts); default "planned" where the graph is fully planned. */
  webgpuRun?: WebGpuRun;
  /** A graph that takes batches, fed on the GPU: pictures one run takes at most (default DEFAULT_MAX_BATCH; 1: no batches). */
  maxBatch?: number;
}

export interface InputSize {
  width: number;
  height: number;
}

export interface MaskSession {
  backend: ActiveBackend;
  /** The model's own input size: what it is fed unless a run asks for another. */
  inputSize: InputSize;
  /** The sizes the graph takes besides inputSize (the manifest's `sizes`); absent: inputSize only. */
  sizes?: BoundModel["sizes"];
  /** On WebGPU: how its runs are fed (runner.ts), as started, not as asked. */
  webgpuFeed?: WebGpuFeed;
  /** On WebGPU: who runs the graph (runner.ts), as started, not as asked. */
  webgpuRun?: WebGpuRun;
  /**
   * rgb: `size` (default inputSize), 3 bytes per pixel, row-major; `size` must be one the
   * model takes (sizeProblem). Resolves to a mask of the same size, 1 byte per pixel.
   */
  run(rgb: Uint8Array, size?: InputSize): Promise<Uint8Array>;
  /**
   * Up to `maxBatch` pictures of one size in one run (a graph that takes batches, on the GPU):
   * their masks in order, each what run() gives for it. Absent where one run takes one picture.
   */
  runBatch?(pictures: readonly Uint8Array[], size?: InputSize): Promise<Uint8Array[]>;
  /** How many pictures runBatch takes at most. */
  maxBatch?: number;
  /** Drops what is kept between runs for speed (the input tensor's 12 MB); the next run makes it again. */
  releaseIdle?(): void;
  dispose(): Promise<void>;
}

/** Pictures one batched run takes at most, unless the session is asked for fewer (docs/MODEL.md, "The GPU form's graph"). */
export const DEFAULT_MAX_BATCH = 4;

export async function createMaskSession(opts: MaskSessionOptions): Promise<MaskSession> {
  const [height0, width0] = opts.model.inputSize;
  const inputSize = { width: width0, height: height0 };
  const sizes = opts.model.sizes;
  const checkInput = (rgb: Uint8Array, size: InputSize) => {
    const problem = sizeProblem({ inputSize, sizes }, size);
    if (problem) throw new InferenceError("inference_failed", problem);
    const expectedBytes = size.width * size.height * 3;
    if (!(rgb instanceof Uint8Array) || rgb.length !== expectedBytes) {
      const got = rgb instanceof Uint8Array ? `${rgb.length} bytes` : typeof rgb;
      throw new InferenceError("inference_failed", `mask input must be ${size.width}x${size.height} RGB (${expectedBytes} bytes), got ${got}`);
    }
  };

  if (opts.backend === "stub") {
    const stubs = new Map<string, ReturnType<typeof createStubRunner>>();
    return {
      backend: "stub",
      inputSize,
      sizes,
      async run(rgb, size = inputSize) {
        checkInput(rgb, size);
        const key = `${size.width}x${size.height}`;
        if (!stubs.has(key)) stubs.set(key, createStubRunner(size.width, size.height, opts.stubDelayMs ?? 0));
        return stubs.get(key)!.run();
      },
      async dispose() {},
    };
  }

  const runner = await createRunner(opts);
  // ORT sessions do not promise safe concurrent runs; the pool sends one job at a time,
  // and this chain keeps direct callers (CLI, benchmarks) honest too.
  let tail: Promise<unknown> = Promise.resolve();
  let disposed = false;
  // The input tensor's memory, kept from run to run (runs never overlap, see above): 12 MB
  // for a 1024² model, new pages for the kernel to fault in on every run otherwise. Grown
  // for a larger input; a smaller one uses its start.
  let inputBuffer: Float32Array<ArrayBuffer> | undefined;
  const tensorOf = (rgb: Uint8Array, width: number, height: number) => {
    const values = width * height * 3;
    if (!inputBuffer || inputBuffer.length < values) inputBuffer = new Float32Array(Math.max(values, width0 * height0 * 3));
    return rgbToTensor(rgb, width, height, opts.model, inputBuffer.subarray(0, values));
  };
  /** One run at a time (see above); what it returns is checked and made into masks. */
  const queued = (pictures: readonly Uint8Array[], size: InputSize, infer: () => Promise<ArrayLike<number>[]>): Promise<Uint8Array[]> => {
    const next = tail.then(async () => {
      if (disposed) throw new InferenceError("shutting_down", "mask session is disposed");
      for (const rgb of pictures) checkInput(rgb, size);
      let outputs: ArrayLike<number>[];
      try {
        outputs = await infer();
      } catch (err) {
        if (err instanceof InferenceError) throw err;
        throw new InferenceError("inference_failed", `inference failed: ${messageOf(err)}`, { cause: err });
      }
      return outputs.map((output) => {
        if (output.length !== size.width * size.height) {
          throw new InferenceError("inference_failed", `mask output has ${output.length} values, expected ${size.width * size.height}`);
        }
        return outputToMask(output, opts.model.postprocess, opts.model.activation);
      });
    });
    tail = next.catch(() => {});
    return next;
  };
  // Batches where the graph takes them and the GPU feed runs them, for a card whose
  // arithmetic does not read the picture (scale "max" has one divisor a picture).
  const maxBatch = runner.runRgbBatch && opts.model.scale !== "max" ? Math.max(1, opts.maxBatch ?? DEFAULT_MAX_BATCH) : 1;
  return {
    backend: runner.backend,
    inputSize,
    sizes,
    ...(runner.backend === "webgpu" ? { webgpuFeed: runner.runRgb ? ("gpu-buffers" as const) : ("tensors" as const), webgpuRun: runner.webgpuRun ?? "provider" } : {}),
    async run(rgb, size = inputSize) {
      const { width, height } = size;
      const [mask] = await queued([rgb], size, async () => [
        runner.runRgb ? await runner.runRgb(rgb, height, width) : await runner.run(tensorOf(rgb, width, height), height, width),
      ]);
      return mask!;
    },
    ...(maxBatch > 1
      ? {
          maxBatch,
          runBatch(pictures: readonly Uint8Array[], size = inputSize) {
            if (pictures.length < 1 || pictures.length > maxBatch) {
              return Promise.reject(new InferenceError("inference_failed", `a batch takes 1 to ${maxBatch} pictures, not ${pictures.length}`));
            }
            return queued(pictures, size, () => runner.runRgbBatch!(pictures, size.height, size.width));
          },
        }
      : {}),
    releaseIdle() {
      // A run in progress holds its own reference; the next one allocates afresh.
      inputBuffer = undefined;
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await tail;
      await runner.dispose();
    },
  };
}

/** Why a session's model (its own size, and the others it takes) cannot take `size`, or undefined when it can. */
export function sizeProblem(model: Pick<MaskSession, "inputSize" | "sizes">, size: InputSize): string | undefined {
  const { width: w, height: h } = model.inputSize;
  if (size.width === w && size.height === h) return undefined;
  const s = model.sizes;
  if (!s) return `this model takes only ${w}x${h} input, not ${size.width}x${size.height}`;
  const fits = (v: number) => Number.isInteger(v) && v >= s.min && v <= s.max && v % s.multipleOf === 0;
  if (fits(size.width) && fits(size.height)) return undefined;
  return `this model takes sides that are multiples of ${s.multipleOf} from ${s.min} to ${s.max}, not ${size.width}x${size.height}`;
}

async function createRunner(opts: MaskSessionOptions): Promise<TensorRunner> {
  const runnerOpts = { model: opts.model, modelPath: opts.modelPath, threads: opts.threads, wasmDir: opts.wasmDir, webgpuFeed: opts.webgpuFeed, webgpuRun: opts.webgpuRun };
  switch (opts.backend) {
    case "native": {
      const { createNativeRunner } = await import("./backend-native.ts");
      return createNativeRunner(runnerOpts);
    }
    case "auto":
    case "wasm":
    case "webgpu": {
      const { createOrtWebRunner } = await import("./backend-ort-web.ts");
      return createOrtWebRunner(runnerOpts, opts.backend);
    }
    default:
      throw new InferenceError("model_unavailable", `unknown inference backend "${String(opts.backend)}"`);
  }
}
