// A pool worker that only computes masks: RGB at the model's input size in, mask out.
// The product's pipeline worker does the whole image; this one serves the inference
// tests (test/inference/mask-worker.test.ts) and anyone who wants the mask alone.
import { serveWorker } from "./worker-host.ts";
import { createMaskSession, type MaskSession, type MaskSessionOptions } from "./session.ts";

export interface MaskJob {
  /** inputSize RGB, 3 bytes per pixel; transfer its buffer. */
  rgb: Uint8Array;
}

export interface MaskResult {
  mask: Uint8Array;
  inferenceMs: number;
}

export interface MaskWorkerInfo {
  backend: MaskSession["backend"];
  inputSize: MaskSession["inputSize"];
}

let session: MaskSession | undefined; // one per worker thread, created by init

serveWorker<MaskSessionOptions, MaskJob, MaskResult, MaskWorkerInfo>({
  async init(options) {
    session = await createMaskSession(options);
    return { backend: session.backend, inputSize: session.inputSize };
  },
  async handle(job) {
    if (!session) throw new Error("mask worker used before init");
    const started = performance.now();
    const mask = await session.run(job.rgb);
    return { result: { mask, inferenceMs: performance.now() - started }, transfer: [mask.buffer as ArrayBuffer] };
  },
  async dispose() {
    await session?.dispose();
  },
});
