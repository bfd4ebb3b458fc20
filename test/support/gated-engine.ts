// A stand-in for the worker pool whose jobs end when the test says, not after a real
// duration: `workers` slots; a job holds one until `finish()` ends the oldest running job,
// then runs the inner engine (the stub model) and reports `jobMs` as its processing time,
// as the real pipeline reports its own. Jobs beyond the free slots wait in a FIFO queue,
// as in the real pool. With the service's clock in the test's hands too (makeHarness's
// `now`), every order and every Retry-After the admission works out is the same on any
// machine, however long each step takes there (docs/TESTING.md).
import type { Engine } from "../../src/engine/pipeline/engine.ts";
import type { Admission } from "../../src/product/admission.ts";
import { poll } from "./poll.ts";

export interface GatedEngine extends Engine {
  /** Jobs holding a slot now. */
  running(): number;
  /** Resolves once `n` jobs have taken a slot since the start. */
  whenStarted(n: number): Promise<void>;
  /**
   * Ends the oldest running job (waiting for one to be running first) and resolves once
   * the engine has given its answer. The admission hands the free worker on only after
   * that: move the service's clock before calling this, and wait for the next job with
   * whenStarted before moving it again.
   */
  finish(): Promise<void>;
}

export function gatedEngine(inner: Engine, o: { workers: number; jobMs: number }): GatedEngine {
  let busy = 0;
  const waiting: (() => void)[] = [];
  /** The running jobs' gates, oldest first, and a wake-up for a finish() that came early. */
  const gates: { open: () => void; ended: Promise<void> }[] = [];
  let started = 0;
  const startWaits: { n: number; wake: () => void }[] = [];
  const take = () =>
    busy < o.workers ? (busy++, Promise.resolve()) : new Promise<void>((resolve) => waiting.push(() => (busy++, resolve())));
  const give = () => {
    busy--;
    waiting.shift()?.();
  };
  return {
    whenReady: () => inner.whenReady(),
    state: () => ({ ...inner.state(), poolSize: o.workers, busy, queued: waiting.length }),
    dispose: () => inner.dispose(),
    running: () => busy,
    whenStarted: (n) => (started >= n ? Promise.resolve() : new Promise<void>((wake) => startWaits.push({ n, wake }))),
    async finish() {
      if (gates.length === 0) await this.whenStarted(started + 1);
      const gate = gates.shift()!;
      gate.open();
      await gate.ended;
    },
    async run(job) {
      await take();
      let open!: () => void;
      let ended!: () => void;
      const opened = new Promise<void>((r) => (open = r));
      gates.push({ open, ended: new Promise<void>((r) => (ended = r)) });
      started++;
      for (const w of startWaits.filter((w) => w.n <= started)) {
        startWaits.splice(startWaits.indexOf(w), 1);
        w.wake();
      }
      try {
        await opened;
        const result = await inner.run(job);
        return result.ok ? { ...result, processingMs: o.jobMs } : result;
      } finally {
        give();
        ended();
      }
    },
  };
}

/** The service's clock in a test's hands (makeHarness's `now`). */
export interface TestClock {
  now(): number;
  advance(ms: number): void;
}

export function testClock(start = Date.now()): TestClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

/**
 * Moves the clock by `ms`, ends the running job, and waits until the admission has heard
 * of the end and handed the worker on (to the next job, when one waits): only then may the
 * clock move again, or the next job's start would be stamped with the later time.
 */
export async function endRunningJob(engine: GatedEngine, admission: Admission, clock: TestClock, ms: number): Promise<void> {
  clock.advance(ms);
  const before = admission.stats().inFlight;
  await engine.finish();
  await poll("the job's end reached the admission", async () => admission.stats(), (st) => st.inFlight === before - 1 && st.running === Math.min(1, st.inFlight));
}

/** Ends every job in flight, `jobMs` apart on the clock. */
export async function drainJobs(engine: GatedEngine, admission: Admission, clock: TestClock, jobMs: number): Promise<void> {
  while (admission.stats().inFlight > 0) await endRunningJob(engine, admission, clock, jobMs);
}
