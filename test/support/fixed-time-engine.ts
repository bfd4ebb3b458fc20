// A stand-in for the worker pool with a model of fixed duration: `workers` slots, each
// job holds one for `jobMs` (real time) and then runs the inner engine (the stub model,
// a few ms), and reports `jobMs` as its processing time, as the real pipeline reports
// its own. Jobs beyond the free slots wait in a FIFO queue, as in the real pool, so a
// test sees queue waits and service times apart.
import type { Engine } from "../../src/engine/pipeline/engine.ts";

export interface FixedTimeEngine extends Engine {
  /** Jobs that have started on a slot so far, in start order, with their queue class tag if any. */
  started(): number;
}

export function fixedTimeEngine(inner: Engine, o: { workers: number; jobMs: number }): FixedTimeEngine {
  let busy = 0;
  let started = 0;
  const waiting: (() => void)[] = [];
  const take = () =>
    busy < o.workers
      ? (busy++, Promise.resolve())
      : new Promise<void>((resolve) => waiting.push(() => (busy++, resolve())));
  const give = () => {
    busy--;
    waiting.shift()?.();
  };
  return {
    whenReady: () => inner.whenReady(),
    state: () => ({ ...inner.state(), poolSize: o.workers, busy, queued: waiting.length }),
    dispose: () => inner.dispose(),
    started: () => started,
    async run(job) {
      await take();
      started++;
      try {
        await new Promise((r) => setTimeout(r, o.jobMs));
        const result = await inner.run(job);
        return result.ok ? { ...result, processingMs: o.jobMs } : result;
      } finally {
        give();
      }
    },
  };
}
