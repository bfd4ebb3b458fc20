// Entry of the one thread that owns a GPU session (gpu-engine.ts starts it as a pool of one).
// Its init starts the session and runs it twice (the first run compiles every kernel's
// shaders, the second is timed); each of its jobs hands it a port to one pipeline worker
// (remote-session.ts), whose mask requests it then answers. Requests that wait while a run
// is on the GPU go together in the next run, up to the session's maxBatch pictures of one
// size: the fixed cost of a run is shared, and a lone request never waits for company.
import type { MessagePort } from "node:worker_threads";
import { serveWorker } from "./worker-host.ts";
import { createMaskSession, type InputSize, type MaskSession, type MaskSessionOptions } from "./session.ts";
import type { MaskReply, MaskRequest } from "./remote-session.ts";
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

interface Waiting {
  request: MaskRequest;
  port: MessagePort;
}

let session: MaskSession | undefined;
const waiting: Waiting[] = [];
const ports = new Set<MessagePort>();
let running = false;
/** Runs and the pictures they took, for the engine's state (how well batches form). */
const batches = { runs: 0, pictures: 0 };

async function warmUp(s: MaskSession): Promise<number> {
  const grey = new Uint8Array(s.inputSize.width * s.inputSize.height * 3).fill(128);
  await s.run(grey);
  const t0 = performance.now();
  await s.run(grey);
  return performance.now() - t0;
}

const sameSize = (a: InputSize, b: InputSize) => a.width === b.width && a.height === b.height;

function reply(w: Waiting, answer: MaskReply): void {
  try {
    w.port.postMessage(packViews(answer), "mask" in answer ? [answer.mask.buffer as ArrayBuffer] : []);
  } catch {
    // The pipeline worker went away: nobody waits for this answer.
  }
}

/** One run with the first waiting request and those of its size behind it, then the next. */
function pump(): void {
  if (running || !session || waiting.length === 0) return;
  const s = session;
  const size = waiting[0]!.request.size;
  const take: Waiting[] = [];
  for (let i = 0; i < waiting.length && take.length < (s.maxBatch ?? 1); ) {
    if (sameSize(waiting[i]!.request.size, size)) take.push(...waiting.splice(i, 1));
    else i++;
  }
  running = true;
  batches.runs++;
  batches.pictures += take.length;
  const masks = take.length > 1 && s.runBatch ? s.runBatch(take.map((w) => w.request.rgb), size) : s.run(take[0]!.request.rgb, size).then((m) => [m]);
  masks
    .then(
      (all) => take.forEach((w, k) => reply(w, { id: w.request.id, mask: all[k]! })),
      (err: unknown) => take.forEach((w) => reply(w, { id: w.request.id, error: toWireError(err) })),
    )
    .finally(() => {
      running = false;
      pump();
    });
}

function attach(port: MessagePort): void {
  ports.add(port);
  port.on("message", (raw: MaskRequest) => {
    waiting.push({ request: unpackViews(raw), port });
    pump();
  });
  port.on("close", () => ports.delete(port));
}

serveWorker<MaskSessionOptions, Connect | { batches: true }, { runs: number; pictures: number } | { connected: true }, GpuSessionInfo>({
  init: async (settings) => {
    session = await createMaskSession(settings);
    const warmRunMs = await warmUp(session);
    return { backend: session.backend, warmRunMs, maxBatch: session.maxBatch ?? 1, webgpuFeed: session.webgpuFeed };
  },
  handle: async (job) => {
    if ("connect" in job) {
      attach(job.connect);
      return { result: { connected: true } };
    }
    return { result: { ...batches } };
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
