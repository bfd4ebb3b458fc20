// A pool worker that runs the real removal pipeline with the stub model, but holds each
// job until the test says what happens to it: die in the middle of it (the thread exits,
// as when the runtime aborts or the thread is killed) or go on. The test and the
// worker share a SharedArrayBuffer (its slots are in killable-slots.ts).
import { setTimeout as sleep } from "node:timers/promises";
import { serveWorker } from "../../src/engine/inference/worker-host.ts";
import { createMaskSession, type MaskSession } from "../../src/engine/inference/session.ts";
import { runPipeline, type PipelineJob, type PipelineResult } from "../../src/engine/pipeline/pipeline.ts";
import { DIE, JOBS_STARTED, MODE, WAIT, type KillableData } from "./killable-slots.ts";

let session: MaskSession | undefined;
let control: Int32Array | undefined;

serveWorker<KillableData, PipelineJob, PipelineResult>({
  async init(data) {
    control = new Int32Array(data.control);
    session = await createMaskSession({
      model: { inputSize: [data.inputSize, data.inputSize] } as never,
      modelPath: "",
      backend: "stub",
      threads: 1,
      wasmDir: "",
      stubDelayMs: 0,
    });
    return { backend: session.backend };
  },
  async handle(job) {
    if (!session || !control) throw new Error("worker used before init");
    Atomics.add(control, JOBS_STARTED, 1);
    while (Atomics.load(control, MODE) === WAIT) await sleep(5);
    // process.exit in a worker thread ends that thread only: the pool sees it die mid-job.
    if (Atomics.load(control, MODE) === DIE) process.exit(70);
    const result = await runPipeline(job, session);
    return { result, transfer: result.ok ? [result.png.buffer as ArrayBuffer] : [] };
  },
});

