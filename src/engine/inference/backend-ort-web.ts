// onnxruntime-web backends: WebAssembly (CPU, SIMD, threads) and WebGPU.
//
// How ORT-web finds its runtime: in Node the "onnxruntime-web" import resolves to
// ort.node.min.mjs, which dynamic-imports ort-wasm-simd-threaded.mjs from env.wasm.wasmPaths
// and reads the .wasm next to it with fs (a file: URL works; Emscripten turns it back into a
// path). The WebGPU bundle ("onnxruntime-web/webgpu") uses the asyncify build instead.
// scripts/assemble-models.mjs copies both builds into wasm/ so nothing comes from a CDN.
//
// ORT-web's env is per JavaScript realm and read once, when the first session starts the
// runtime: the first session's thread count wins for the whole thread. The pool gives every
// session its own worker thread, so in practice each session sets it once.
import { resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import type * as Ort from "onnxruntime-web";
import { InferenceError, messageOf } from "./errors.ts";
import type { ModelEntry } from "./manifest.ts";
import { readModelBytes } from "./model-bytes.ts";
import { checkGraphNames, inputDims, type RunnerOptions, type TensorRunner } from "./runner.ts";
import { createWebGpuIo, outputOnGpu, type WebGpuIo } from "./webgpu-io.ts";
import { requestAdapterFacts, type GpuAdapterFacts } from "./gpu-doctor.ts";

type OrtModule = typeof Ort;

/** WebGPU is offered by Deno and browsers as navigator.gpu; Node 20 has neither. */
export function hasWebGpu(): boolean {
  const nav = (globalThis as { navigator?: { gpu?: unknown } }).navigator;
  return nav?.gpu !== undefined && nav.gpu !== null;
}

/**
 * For "auto": a GPU adapter that is not a software fallback. Deno always has navigator.gpu,
 * and without a GPU it offers a CPU rasteriser (llvmpipe, isFallbackAdapter) on which one
 * inference took 5.5 minutes here, against 10-25 s on WebAssembly.
 */
export async function hardwareAdapter(): Promise<GpuAdapterFacts | undefined> {
  const { adapter } = await requestAdapterFacts();
  return adapter && !adapter.software ? adapter : undefined;
}

export async function hasHardwareGpu(): Promise<boolean> {
  return (await hardwareAdapter()) !== undefined;
}

export async function importOrtWeb(bundle: "default" | "webgpu"): Promise<OrtModule> {
  if (bundle === "webgpu") hideOpaqueLocation();
  const mod = (bundle === "webgpu" ? await import("onnxruntime-web/webgpu") : await import("onnxruntime-web")) as OrtModule & {
    default?: OrtModule;
  };
  // The node build is CommonJS-shaped under some loaders: take the namespace either way.
  return mod.InferenceSession ? mod : (mod.default as OrtModule);
}

/**
 * The WebGPU bundle resolves its own URL against `location.origin` wherever `location`
 * exists. In a Deno worker thread `location` is the worker's file: URL, whose origin is the
 * string "null", and `new URL(..., "null")` throws ("Invalid URL ... with base 'null'"): no
 * session could start in a pool worker. Without `location` (Deno's main thread, Node) the
 * bundle uses import.meta.url alone, so the worker hides it. Nothing of ours reads it.
 */
function hideOpaqueLocation(): void {
  const location = (globalThis as { location?: { origin?: string } }).location;
  if (location?.origin === "null") Object.defineProperty(globalThis, "location", { value: undefined, configurable: true, writable: true });
}

export function configureOrtWeb(ort: OrtModule, wasmDir: string, threads: number): void {
  // A trailing separator makes it a directory prefix: ORT appends the file names to it.
  ort.env.wasm.wasmPaths = pathToFileURL(resolve(wasmDir) + sep).href;
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
}

/**
 * The WebGPU bundle is onnxruntime-web's browser build: it starts its WebAssembly threads
 * from blob: URLs, which Deno's module loader refuses ("Only file and data URLs are
 * supported"), so any thread count above one fails the session (seen on an H200 under
 * Deno 2.9). The GPU does the model's work; its WebAssembly side only feeds it.
 */
export const WEBGPU_WASM_THREADS = 1;

/** Session options for both providers (exported so the benchmark measures the same thing). */
export const ortWebSessionOptions = (provider: "wasm" | "webgpu"): Ort.InferenceSession.SessionOptions => ({
  executionProviders: [provider],
  graphOptimizationLevel: "all",
  executionMode: "sequential",
  enableCpuMemArena: true,
  // ORT's memory pattern plans one block per run from the first run's allocations, and the
  // second run touches that block's fresh pages: with `int8-static` on wasm (2 threads)
  // the second run took 3.7 s with it and 3.0 s without, and after 8 runs the process held
  // 40-55 MiB less (docs/MODEL.md, "Memory"). The arena alone reuses freed activations.
  // WebGPU keeps ORT's default.
  ...(provider === "wasm" ? { enableMemPattern: false } : {}),
});

/** Whether a WebGPU session of these options is fed through GPU buffers (webgpu-io.ts), the default. */
const feedsGpuBuffers = (opts: RunnerOptions): boolean => (opts.webgpuFeed ?? "gpu-buffers") === "gpu-buffers";

async function startSession(ort: OrtModule, bytes: Uint8Array, opts: RunnerOptions, provider: "wasm" | "webgpu") {
  const gpuBuffers = provider === "webgpu" && feedsGpuBuffers(opts);
  const session = await ort.InferenceSession.create(bytes, { ...ortWebSessionOptions(provider), ...(gpuBuffers ? outputOnGpu(opts.model) : {}) });
  const problem = checkGraphNames(opts.model, session.inputNames, session.outputNames);
  if (problem) {
    await session.release();
    throw new InferenceError("model_unavailable", problem);
  }
  return session;
}

/**
 * Whether a session starts on WebGPU: when asked for, or for "auto" when the model's entry
 * lets auto use a GPU and the adapter is a hardware one (asked last: it starts the adapter).
 */
export async function startsOnGpu(
  preference: "wasm" | "webgpu" | "auto",
  model: Pick<ModelEntry, "autoBackend">,
  hardwareGpu: () => Promise<boolean> = hasHardwareGpu,
): Promise<boolean> {
  if (preference !== "auto") return preference === "webgpu";
  return model.autoBackend === "any" && (await hardwareGpu());
}

/**
 * preference "auto": WebGPU when a hardware GPU adapter exists and a session starts on it, else
 * WebAssembly (through the default bundle: see the fallback below).
 */
export async function createOrtWebRunner(opts: RunnerOptions, preference: "wasm" | "webgpu" | "auto"): Promise<TensorRunner> {
  if (preference === "webgpu" && !hasWebGpu()) {
    throw new InferenceError("model_unavailable", "backend webgpu needs navigator.gpu (Deno or a browser); use wasm or auto");
  }
  const tryGpu = await startsOnGpu(preference, opts.model);
  // The file's bytes go to the runtime as read (it copies them into its own heap) and are
  // hashed meanwhile; they are freed once the session holds the model.
  const model = await readModelBytes(opts.modelPath, opts.model);
  const bytes = model.bytes;

  // The planned run first, for a graph it plans whole; anything else (or a start that
  // fails) goes on to onnxruntime-web's WebGPU provider below.
  if (tryGpu && (opts.webgpuRun ?? "planned") === "planned" && feedsGpuBuffers(opts)) {
    // Loaded only here: a WebAssembly start never reads the planned run's code.
    const { startPlannedRun } = await import("./planned/start-planned.ts");
    const planned = await startPlannedRun(bytes, opts.model);
    if (planned) {
      model.drop();
      try {
        await model.verified;
      } catch (err) {
        await planned.dispose();
        throw err;
      }
      return planned;
    }
  }

  let started: { ort: OrtModule; session: Ort.InferenceSession; backend: "wasm" | "webgpu" } | undefined;
  if (tryGpu) {
    try {
      const ort = await importOrtWeb("webgpu");
      configureOrtWeb(ort, opts.wasmDir, WEBGPU_WASM_THREADS);
      started = { ort, session: await startSession(ort, bytes, opts, "webgpu"), backend: "webgpu" };
    } catch (err) {
      // "auto" falls back to WebAssembly on any GPU failure but a wrong graph. A failed
      // WebGPU start leaves that module's runtime marked as failed ("previous call to
      // initWasm() failed"), so the fallback loads the other bundle.
      if (err instanceof InferenceError || preference !== "auto") throw wrapStartError(err, "webgpu");
    }
  }
  if (!started) {
    const ort = await importOrtWeb("default");
    configureOrtWeb(ort, opts.wasmDir, opts.threads);
    const session = await startSession(ort, bytes, opts, "wasm").catch((e: unknown) => {
      throw wrapStartError(e, "wasm");
    });
    started = { ort, session, backend: "wasm" };
  }
  const { ort, session, backend } = started;
  model.drop(); // the session copied the model into the runtime's heap

  let gpuIo: WebGpuIo | undefined;
  try {
    await model.verified;
    if (backend === "webgpu" && feedsGpuBuffers(opts)) gpuIo = await createWebGpuIo(ort, session, opts.model);
  } catch (err) {
    await session.release();
    throw err;
  }

  return {
    backend,
    ...(gpuIo
      ? {
          runRgb: async (rgb: Uint8Array, height: number, width: number) => (await gpuIo.run([rgb], height, width))[0]!,
          ...(opts.model.batches ? { runRgbBatch: (pictures: readonly Uint8Array[], height: number, width: number) => gpuIo.run(pictures, height, width) } : {}),
        }
      : {}),
    async run(input, height, width) {
      const feeds = { [opts.model.inputName]: new ort.Tensor("float32", input, inputDims(opts.model, height, width)) };
      const out = await session.run(feeds, [opts.model.outputName]);
      const tensor = out[opts.model.outputName];
      if (!tensor) throw new InferenceError("inference_failed", `model returned no "${opts.model.outputName}"`);
      // Copies off the GPU when needed; on the CPU it is the data itself.
      const data = (await tensor.getData()) as ArrayLike<number>;
      tensor.dispose();
      return data;
    },
    dispose: async () => {
      gpuIo?.dispose();
      await session.release();
    },
  };
}

/**
 * Destroys the WebGPU device onnxruntime-web made in this thread, once no session of it is
 * left (the GPU session thread as it ends): ORT keeps one device per thread for every
 * session after, so a thread that goes on making sessions must not call this.
 */
export async function releaseWebGpuDevice(): Promise<void> {
  try {
    const ort = await importOrtWeb("webgpu");
    // ORT's device promise settles only once its backend started: never wait on it for long.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const device = (await Promise.race([ort.env.webgpu.device, new Promise((r) => (timer = setTimeout(r, 200)))])) as { destroy?(): void } | undefined;
    clearTimeout(timer);
    device?.destroy?.();
  } catch {
    // No device was made, or it is gone already.
  }
}

function wrapStartError(err: unknown, backend: string): InferenceError {
  if (err instanceof InferenceError) return err;
  return new InferenceError("model_unavailable", `cannot start a ${backend} session: ${messageOf(err)}`, { cause: err });
}
