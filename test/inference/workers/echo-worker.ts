// A pool worker for the pool tests: no model, just behaviours on demand. It counts the
// jobs it handled and the pool's idle notices it heard, so tests can see order, which
// worker (threadId) answered, and when the pool told it that no job followed.
import { threadId } from "node:worker_threads";
import { setTimeout as sleep } from "node:timers/promises";
import { serveWorker } from "../../../src/engine/inference/worker-host.ts";

export interface EchoData {
  initDelayMs?: number;
  failInit?: boolean;
  crashInit?: boolean;
}

export type EchoJob =
  | { op: "echo"; value: number; delayMs?: number }
  | { op: "fail"; message: string; code?: string }
  | { op: "crash" }
  | { op: "bytes"; data: Uint8Array };

export interface EchoOut {
  value?: number;
  handled: number;
  /** "idle" messages heard before this job. */
  idles: number;
  threadId: number;
  byteSum?: number;
}

let handled = 0;
let idles = 0;

serveWorker<EchoData, EchoJob, EchoOut, { backend: string; threadId: number }>({
  async init(data) {
    if (data.initDelayMs) await sleep(data.initDelayMs);
    if (data.failInit) throw new Error("init refused on purpose");
    if (data.crashInit) process.exit(3);
    return { backend: "echo", threadId };
  },
  async handle(job) {
    handled++;
    switch (job.op) {
      case "echo":
        if (job.delayMs) await sleep(job.delayMs);
        return { result: { value: job.value, handled, idles, threadId } };
      case "fail":
        throw Object.assign(new Error(job.message), { code: job.code });
      case "crash":
        // An uncaught error outside the handler's promise kills the thread, like a
        // runtime abort would.
        setImmediate(() => {
          throw new Error("worker crashed on purpose");
        });
        await sleep(10_000);
        return { result: { handled, idles, threadId } };
      case "bytes": {
        let byteSum = 0;
        for (const b of job.data) byteSum += b;
        return { result: { byteSum, handled, idles, threadId } };
      }
    }
  },
  idle() {
    idles++;
  },
});
