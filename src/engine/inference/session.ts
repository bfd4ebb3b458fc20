// A mask session: RGB bytes at the model's input size in, a 0..255 mask of the same size
// out. It hides which backend runs the model and owns the pre/post-processing the
// manifest describes. Resizing to and from the input size is the imaging module's job.
import { InferenceError, messageOf } from "./errors.ts";
import type { BoundModel } from "./model-card.ts";
import { createStubRunner } from "./backend-stub.ts";
import { outputToMask, rgbToTensor } from "./tensor.ts";
import type { TensorRunner } from "./runner.ts";

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
}

export interface MaskSession {
  backend: ActiveBackend;
  inputSize: { width: number; height: number };
  /** rgb: inputSize, 3 bytes per pixel, row-major. Resolves to inputSize, 1 byte per pixel. */
  run(rgb: Uint8Array): Promise<Uint8Array>;
  /** Drops what is kept between runs for speed (the input tensor's 12 MB); the next run makes it again. */
  releaseIdle?(): void;
  dispose(): Promise<void>;
}

export async function createMaskSession(opts: MaskSessionOptions): Promise<MaskSession> {
  const [height, width] = opts.model.inputSize;
  const inputSize = { width, height };
  const expectedBytes = width * height * 3;
  const checkInput = (rgb: Uint8Array) => {
    if (!(rgb instanceof Uint8Array) || rgb.length !== expectedBytes) {
      const got = rgb instanceof Uint8Array ? `${rgb.length} bytes` : typeof rgb;
      throw new InferenceError("inference_failed", `mask input must be ${width}x${height} RGB (${expectedBytes} bytes), got ${got}`);
    }
  };

  if (opts.backend === "stub") {
    const stub = createStubRunner(width, height, opts.stubDelayMs ?? 0);
    return {
      backend: "stub",
      inputSize,
      async run(rgb) {
        checkInput(rgb);
        return stub.run();
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
  // for a 1024² model, new pages for the kernel to fault in on every run otherwise.
  let inputBuffer: Float32Array<ArrayBuffer> | undefined;
  return {
    backend: runner.backend,
    inputSize,
    run(rgb) {
      const next = tail.then(async () => {
        if (disposed) throw new InferenceError("shutting_down", "mask session is disposed");
        checkInput(rgb);
        const input = rgbToTensor(rgb, width, height, opts.model, (inputBuffer ??= new Float32Array(width * height * 3)));
        let output: ArrayLike<number>;
        try {
          output = await runner.run(input);
        } catch (err) {
          if (err instanceof InferenceError) throw err;
          throw new InferenceError("inference_failed", `inference failed: ${messageOf(err)}`, { cause: err });
        }
        if (output.length !== width * height) {
          throw new InferenceError("inference_failed", `mask output has ${output.length} values, expected ${width * height}`);
        }
        return outputToMask(output, opts.model.postprocess, opts.model.activation);
      });
      tail = next.catch(() => {});
      return next;
    },
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

async function createRunner(opts: MaskSessionOptions): Promise<TensorRunner> {
  const runnerOpts = { model: opts.model, modelPath: opts.modelPath, threads: opts.threads, wasmDir: opts.wasmDir };
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
