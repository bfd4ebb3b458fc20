// Entry of one inference-pool worker: owns one model session for its whole life and
// runs the complete pipeline for each job, so decoding and encoding also stay off the
// HTTP event loop.
import { serveWorker } from "../inference/worker-host.ts";
import { createMaskSession, warmUp, type MaskSession } from "../inference/session.ts";
import { runPipeline, type PipelineJob, type PipelineResult } from "./pipeline.ts";
import type { SessionSettings } from "./engine.ts";

let session: MaskSession | undefined;

serveWorker<SessionSettings, PipelineJob, PipelineResult>({
  init: async (settings) => {
    session = await createMaskSession(settings);
    // Warm-up: the first run pays for graph optimisation and memory arenas.
    // Its duration seeds the admission's job-time estimate (see engine.ts).
    return { backend: session.backend, warmUpMs: await warmUp(session) };
  },
  handle: async (job) => {
    if (!session) throw new Error("worker used before init");
    const result = await runPipeline(job, session);
    return { result, transfer: result.ok ? [result.png.buffer as ArrayBuffer] : [] };
  },
  dispose: async () => {
    await session?.dispose();
  },
});
