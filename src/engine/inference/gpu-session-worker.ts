// Entry of the one thread that owns a GPU session (gpu-engine.ts starts it as a pool of one).
// Its init starts the session and runs it twice (the first run compiles every kernel's
// shaders, the second is timed); each of its jobs hands it a port to one pipeline worker
// (remote-session.ts), whose mask requests it then answers through one batcher
// (mask-batcher.ts): requests that wait while a run is on the GPU go together in the next.
import type { MessagePort } from "node:worker_threads";
import { serveWorker } from "./worker-host.ts";
import { createMaskSession, type MaskSession, type MaskSessionOptions } from "./session.ts";
import type { MaskReply, MaskRequest } from "./remote-session.ts";
import { createMaskBatcher, type MaskBatcher } from "./mask-batcher.ts";
import { packViews, unpackViews } from "./thread-views.ts";
import { toWireError } from "./worker-protocol.ts";
import { releaseWebGpuDevice } from "./backend-ort-web.ts";

export interface GpuSessionInfo {
  backend: string;
  /** A warm run's milliseconds at the model's own size, one picture. */
  warmRunMs: number;
  /** Pictures one run takes at most (1: no batches). */
  maxBatch: number;
  webgpuFeed?: string;
}

/** What a pool job hands this thread: a port to one pipeline worker. */
export interface Connect {
  connect: MessagePort;
}

let session: MaskSession | undefined;
let batcher: MaskBatcher | undefined;
const ports = new Set<MessagePort>();

async function warmUp(s: MaskSession): Promise<number> {
  const grey = new Uint8Array(s.inputSize.width * s.inputSize.height * 3).fill(128);
  await s.run(grey);
  const t0 = performance.now();
  await s.run(grey);
  return performance.now() - t0;
}

function attach(port: MessagePort): void {
  ports.add(port);
  port.on("message", (raw: MaskRequest) => {
    const { id, rgb, size } = unpackViews(raw);
    const reply = (answer: MaskReply) => {
      try {
        port.postMessage(packViews(answer), "mask" in answer ? [answer.mask.buffer as ArrayBuffer] : []);
      } catch {
        // The pipeline worker went away: nobody waits for this answer.
      }
    };
    if (!batcher) return reply({ id, error: { message: "the GPU session has not started", code: "inference_failed" } });
    batcher.ask(rgb, size).then(
      (mask) => reply({ id, mask }),
      (err: unknown) => reply({ id, error: toWireError(err) }),
    );
  });
  port.on("close", () => ports.delete(port));
}

serveWorker<MaskSessionOptions, Connect | { batches: true }, { runs: number; pictures: number } | { connected: true }, GpuSessionInfo>({
  init: async (settings) => {
    session = await createMaskSession(settings);
    const warmRunMs = await warmUp(session);
    batcher = createMaskBatcher(session);
    return { backend: session.backend, warmRunMs, maxBatch: session.maxBatch ?? 1, webgpuFeed: session.webgpuFeed };
  },
  handle: async (job) => {
    if ("connect" in job) {
      attach(job.connect);
      return { result: { connected: true } };
    }
    return { result: batcher?.counts() ?? { runs: 0, pictures: 0 } };
  },
  dispose: async () => {
    for (const port of ports) port.close();
    const onGpu = session?.backend === "webgpu";
    await session?.dispose();
    // The device goes before the thread does: its GPU memory and the driver's threads are
    // released in order here, not by the driver's own handlers racing the process's exit.
    if (onGpu) await releaseWebGpuDevice();
  },
});
