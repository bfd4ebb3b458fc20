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
import { readModelBytes } from "./model-bytes.ts";
import { checkGraphNames, type RunnerOptions, type TensorRunner } from "./runner.ts";

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
async function hasHardwareGpu(): Promise<boolean> {
  if (!hasWebGpu()) return false;
  const gpu = (globalThis as { navigator?: { gpu?: { requestAdapter(): Promise<unknown> } } }).navigator?.gpu;
  try {
    const adapter = (await gpu?.requestAdapter()) as { isFallbackAdapter?: boolean; info?: { isFallbackAdapter?: boolean } } | null;
    if (!adapter) return false;
    return !(adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false);
  } catch {
    return false;
  }
}

export async function importOrtWeb(bundle: "default" | "webgpu"): Promise<OrtModule> {
  const mod = (bundle === "webgpu" ? await import("onnxruntime-web/webgpu") : await import("onnxruntime-web")) as OrtModule & {
    default?: OrtModule;
  };
  // The node build is CommonJS-shaped under some loaders: take the namespace either way.
  return mod.InferenceSession ? mod : (mod.default as OrtModule);
}

export function configureOrtWeb(ort: OrtModule, wasmDir: string, threads: number): void {
  // A trailing separator makes it a directory prefix: ORT appends the file names to it.
  ort.env.wasm.wasmPaths = pathToFileURL(resolve(wasmDir) + sep).href;
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
}

/** Session options for both providers (exported so the benchmark measures the same thing). */
export const ortWebSessionOptions = (provider: "wasm" | "webgpu"): Ort.InferenceSession.SessionOptions => ({
  executionProviders: [provider],
  graphOptimizationLevel: "all",
  executionMode: "sequential",
  enableCpuMemArena: true,
});

async function startSession(ort: OrtModule, bytes: Uint8Array, opts: RunnerOptions, provider: "wasm" | "webgpu") {
  const session = await ort.InferenceSession.create(bytes, ortWebSessionOptions(provider));
  const problem = checkGraphNames(opts.model, session.inputNames, session.outputNames);
  if (problem) {
    await session.release();
    throw new InferenceError("model_unavailable", problem);
  }
  return session;
}

/**
 * preference "auto": WebGPU when a hardware GPU adapter exists and a session starts on it, else
 * WebAssembly (through the default bundle: see the fallback below).
 */
export async function createOrtWebRunner(opts: RunnerOptions, preference: "wasm" | "webgpu" | "auto"): Promise<TensorRunner> {
  const tryGpu = preference === "webgpu" || (preference === "auto" && (await hasHardwareGpu()));
  if (preference === "webgpu" && !hasWebGpu()) {
    throw new InferenceError("model_unavailable", "backend webgpu needs navigator.gpu (Deno or a browser); use wasm or auto");
  }
  // The file's bytes go to the runtime as read (it copies them into its own heap) and are
  // hashed meanwhile; they are dropped once the session holds the model.
  const model = await readModelBytes(opts.modelPath, opts.model);
  const bytes = model.bytes;

  let ort = await importOrtWeb(tryGpu ? "webgpu" : "default");
  configureOrtWeb(ort, opts.wasmDir, opts.threads);
  let backend: "wasm" | "webgpu" = tryGpu ? "webgpu" : "wasm";
  let session: Ort.InferenceSession;
  try {
    session = await startSession(ort, bytes, opts, backend);
  } catch (err) {
    if (err instanceof InferenceError || preference !== "auto" || backend === "wasm") throw wrapStartError(err, backend);
    backend = "wasm";
    // A failed WebGPU start leaves that module's runtime marked as failed ("previous call
    // to initWasm() failed"), so the WebAssembly fallback needs the other bundle.
    ort = await importOrtWeb("default");
    configureOrtWeb(ort, opts.wasmDir, opts.threads);
    session = await startSession(ort, bytes, opts, backend).catch((e: unknown) => {
      throw wrapStartError(e, "wasm");
    });
  }

  try {
    await model.verified;
  } catch (err) {
    await session.release();
    throw err;
  }

  const [height, width] = opts.model.inputSize;
  const dims = [1, 3, height, width];
  return {
    backend,
    async run(input) {
      const feeds = { [opts.model.inputName]: new ort.Tensor("float32", input, dims) };
      const out = await session.run(feeds, [opts.model.outputName]);
      const tensor = out[opts.model.outputName];
      if (!tensor) throw new InferenceError("inference_failed", `model returned no "${opts.model.outputName}"`);
      // Copies off the GPU when needed; on the CPU it is the data itself.
      const data = (await tensor.getData()) as ArrayLike<number>;
      tensor.dispose();
      return data;
    },
    dispose: () => session.release(),
  };
}

function wrapStartError(err: unknown, backend: string): InferenceError {
  if (err instanceof InferenceError) return err;
  return new InferenceError("model_unavailable", `cannot start a ${backend} session: ${messageOf(err)}`, { cause: err });
}
