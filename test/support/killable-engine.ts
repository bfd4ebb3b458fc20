// A real worker-pool engine (src/engine/inference/pool.ts, the pool the service uses) whose
// workers run the real pipeline with the stub model and whose jobs the test can kill
// mid-run. The pool's own handling of a dying worker is what is under test: the job
// fails with inference_failed and a replacement worker takes the next one.
import { createWorkerPool } from "../../src/engine/inference/pool.ts";
import type { Engine } from "../../src/engine/pipeline/engine.ts";
import type { PipelineJob, PipelineResult } from "../../src/engine/pipeline/pipeline.ts";
import { DIE, GO, JOBS_STARTED, MODE, WAIT, type KillableData } from "./killable-slots.ts";

export interface KillableEngine extends Engine {
  /** Jobs that have reached a worker so far. */
  jobsStarted(): number;
  /** Held jobs (and later ones) wait / die / go on. */
  setMode(mode: "wait" | "die" | "go"): void;
  restarts(): number;
}

export function createKillableEngine(o: { poolSize?: number; inputSize?: number } = {}): KillableEngine {
  const control = new SharedArrayBuffer(8);
  const slots = new Int32Array(control);
  Atomics.store(slots, MODE, GO);
  const data: KillableData = { inputSize: o.inputSize ?? 256, control };
  const pool = createWorkerPool<PipelineJob, PipelineResult>({
    size: o.poolSize ?? 1,
    workerUrl: new URL("./killable-pipeline-worker.ts", import.meta.url),
    workerData: data,
    startTimeoutMs: 60_000,
    restartDelayMs: 100,
  });
  const ready = pool.ready().then(() => undefined);
  ready.catch(() => {});
  return {
    whenReady: () => ready,
    state() {
      const s = pool.stats();
      return { ready: s.ready, backend: s.backend, poolSize: s.size, busy: s.busy, queued: s.queued };
    },
    run: (job) => pool.run(job, [job.image.buffer as ArrayBuffer]),
    dispose: () => pool.dispose(),
    jobsStarted: () => Atomics.load(slots, JOBS_STARTED),
    setMode: (mode) => Atomics.store(slots, MODE, mode === "wait" ? WAIT : mode === "die" ? DIE : GO),
    restarts: () => pool.stats().restarts,
  };
}
