// The inference module's public surface. Worker entries import worker-host.ts directly
// (it touches worker_threads' parentPort), everyone else can come through here.
import { fileURLToPath } from "node:url";

export { InferenceError, type InferenceErrorCode, type InferenceFailure } from "./errors.ts";
export {
  loadManifest,
  parseManifest,
  resolveModel,
  sha256OfFile,
  type ModelEntry,
  type ModelManifest,
  type ResolvedModel,
} from "./manifest.ts";
export {
  createMaskSession,
  warmUp,
  type ActiveBackend,
  type BackendChoice,
  type MaskSession,
  type MaskSessionOptions,
} from "./session.ts";
export { createWorkerPool, type PoolInfo, type PoolOptions, type PoolStats, type WorkerPool } from "./pool.ts";
export type { MaskJob, MaskResult, MaskWorkerInfo } from "./mask-worker.ts";

/** wasm/ at the project root, where assemble-models.mjs puts the onnxruntime-web runtime. */
export const defaultWasmDir = (): string => fileURLToPath(new URL("../../wasm/", import.meta.url));

/** The mask-only worker entry, for createWorkerPool. */
export const maskWorkerUrl = (): URL => new URL("./mask-worker.ts", import.meta.url);
