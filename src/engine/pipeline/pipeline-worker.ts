// Entry of one inference-pool worker: owns one model session for its whole life and
// runs the complete pipeline for each job, so decoding and encoding also stay off the
// HTTP event loop.
import { serveWorker } from "../inference/worker-host.ts";
import { createMaskSession, type MaskSession } from "../inference/session.ts";
import { remoteMaskSession } from "../inference/remote-session.ts";
import { runPipeline, type PipelineJob, type PipelineResult } from "./pipeline.ts";
import type { PipelineWorkerInfo, WorkerSettings } from "./engine.ts";
import { startThreadBands, type ThreadBands } from "./pipeline-bands.ts";
import { exposedGc, releasesAfter } from "./release-memory.ts";
import { releaseDefaultCodecs } from "../imaging/codecs.ts";

let session: MaskSession | undefined;
/** Helper threads for the pixel steps: one per session thread beyond the first (pipeline-bands.ts). */
let bands: ThreadBands | undefined;

/**
 * After a large job (release-memory.ts), the pool's next message decides: a job that
 * follows at once collects the last one's garbage first; "idle" also drops what is kept
 * for a next large job. `garbage`: the last job was large; `kept`: one was since the last release.
 */
let garbage = false;
let kept = false;

/** The last job's garbage, in this thread and the band helpers'. */
function collectAfterJob(): void {
  garbage = false;
  bands?.collect();
  exposedGc()?.();
}

/** What is kept for the next large job: the decoders' instances, the band arena and the input tensor; then one collection. */
function releaseWhenIdle(): void {
  garbage = kept = false;
  releaseDefaultCodecs();
  bands?.release();
  session?.releaseIdle?.();
  exposedGc()?.();
}

serveWorker<WorkerSettings, PipelineJob, PipelineResult, PipelineWorkerInfo>({
  init: async ({ sessionPort, ...settings }) => {
    // Helpers start while the session loads; without them the bands run on this thread.
    const helpers = startThreadBands(settings.threads - 1);
    // No warm-up run here: on the CPU the first job pays what a first run costs beyond later
    // ones (the runtime's heap growing to its working size, about 1 s on the 2-core
    // machine) instead of every start paying a whole inference nobody asked for
    // (docs/MODEL.md, "Memory"). A shared GPU session warms up in its own thread.
    session = sessionPort ? remoteMaskSession(sessionPort, settings.model) : await createMaskSession(settings);
    bands = await helpers;
    return { backend: session.backend, bandHelpers: bands ? bands.parts - 1 : 0 };
  },
  handle: async (job) => {
    if (!session) throw new Error("worker used before init");
    if (garbage) collectAfterJob();
    const large = releasesAfter(job.image);
    try {
      const result = await runPipeline(job, session, bands);
      return { result, transfer: result.ok ? [result.png.buffer as ArrayBuffer] : [] };
    } finally {
      if (large) garbage = kept = true;
    }
  },
  // The pool has no job for this worker: nothing is kept for one that may not come soon.
  idle: () => {
    if (kept) releaseWhenIdle();
  },
  dispose: async () => {
    await bands?.dispose();
    await session?.dispose();
  },
});
