// Messages between the pool (pool.ts) and a worker (worker-host.ts). Workers start at
// worker-bootstrap.mjs, which receives a WorkerEnvelope and imports the real entry.
import type { MessagePort } from "node:worker_threads";

export interface WorkerEnvelope {
  /** URL of the worker's entry module (may be .ts; the bootstrap makes that loadable). */
  entry: string;
  /** The pool's workerData, passed to the handler's init. */
  data: unknown;
}

/** What may be moved instead of copied with a message: buffers (image bytes, masks), and ports between our threads. */
export type TransferList = readonly (ArrayBuffer | MessagePort)[];

export interface WireError {
  message: string;
  code?: string;
}

/**
 * "idle": the pool has no job for this worker after its answer (its queue was empty), so
 * the worker may give back what it keeps for a next job (WorkerHandler.idle).
 */
export type ToWorker = { type: "job"; id: number; job: unknown } | { type: "idle" } | { type: "close" };

export type FromWorker =
  | { type: "ready"; info: unknown }
  | { type: "init-failed"; error: WireError }
  | { type: "result"; id: number; result: unknown }
  | { type: "error"; id: number; error: WireError }
  | { type: "closed" };

export function toWireError(err: unknown): WireError {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" ? { message: err.message, code } : { message: err.message };
  }
  return { message: String(err) };
}
