// Entry of one inference-pool worker: owns one model session for its whole life and
// runs the complete pipeline for each job, so decoding and encoding also stay off the
// HTTP event loop.
import { serveWorker } from "../inference/worker-host.ts";
import { createMaskSession, type MaskSession } from "../inference/session.ts";
import { runPipeline, type PipelineJob, type PipelineResult } from "./pipeline.ts";
import type { SessionSettings } from "./engine.ts";

let session: MaskSession | undefined;

serveWorker<SessionSettings, PipelineJob, PipelineResult>({
  init: async (settings) => {
    session = await createMaskSession(settings);
    // Warm-up: the first run pays for graph optimisation and memory arenas.
    // Its duration seeds the admission's job-time estimate (see engine.ts).
    const { width, height } = session.inputSize;
    const started = performance.now();
    await session.run(new Uint8Array(width * height * 3));
    return { backend: session.backend, warmUpMs: performance.now() - started };
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
