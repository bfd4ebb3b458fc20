// A mask session in another thread, reached through a MessagePort: on a GPU host one thread
// owns the WebGPU session (gpu-session-worker.ts) and every pipeline worker asks it for
// masks, so the pictures' decoding, resizing and encoding run on the CPU's cores while the
// GPU infers, and pictures waiting at once run as one batch. The pipeline's code is the
// same either way: it holds a MaskSession.
import type { MessagePort } from "node:worker_threads";
import { InferenceError } from "./errors.ts";
import type { BoundModel } from "./model-card.ts";
import type { InputSize, MaskSession } from "./session.ts";
import { packViews, unpackViews } from "./thread-views.ts";
import type { WireError } from "./worker-protocol.ts";

/** A pipeline worker's question: one picture at its model input size. */
export interface MaskRequest {
  id: number;
  rgb: Uint8Array;
  size: InputSize;
}

/** The session thread's answer. */
export type MaskReply = { id: number; mask: Uint8Array } | { id: number; error: WireError };

const OUR_CODES = new Set(["inference_failed", "model_unavailable", "shutting_down"]);

/**
 * The session behind `port`, for a model whose card is `model`. A run rejects when the session
 * thread answers with an error or goes away (its port closes): the job fails, and the engine
 * that owns the thread sees it stopped (gpu-engine.ts).
 */
export function remoteMaskSession(port: MessagePort, model: Pick<BoundModel, "inputSize" | "sizes">): MaskSession {
  const [height, width] = model.inputSize;
  const pending = new Map<number, { resolve(mask: Uint8Array): void; reject(err: Error): void }>();
  let nextId = 1;
  let closed: InferenceError | undefined;
  port.on("message", (raw: MaskReply) => {
    const reply = unpackViews(raw);
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if ("mask" in reply) p.resolve(reply.mask);
    else p.reject(new InferenceError(reply.error.code && OUR_CODES.has(reply.error.code) ? (reply.error.code as "inference_failed") : "inference_failed", reply.error.message));
  });
  port.on("close", () => {
    closed = new InferenceError("inference_failed", "the GPU session's thread stopped");
    for (const p of pending.values()) p.reject(closed);
    pending.clear();
  });
  // Waiting for an answer must not keep the process alive by itself: a job in flight does (the pool refs the worker).
  port.unref?.();
  return {
    backend: "webgpu",
    inputSize: { width, height },
    sizes: model.sizes,
    webgpuFeed: "gpu-buffers",
    run(rgb, size = { width, height }) {
      if (closed) return Promise.reject(closed);
      const id = nextId++;
      return new Promise<Uint8Array>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        port.postMessage(packViews({ id, rgb, size } satisfies MaskRequest));
      });
    },
    async dispose() {
      port.close();
    },
  };
}
