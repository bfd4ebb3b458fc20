// An engine that runs the pipeline on the calling thread with one session. For the
// CLI (no HTTP loop to protect; one file at a time) and for tests of the HTTP layers
// with the stub model. The service itself uses the worker-pool engine.
import type { MaskSession } from "../inference/session.ts";
import type { Engine } from "./engine.ts";
import { runPipeline } from "./pipeline.ts";

export function createInlineEngine(session: MaskSession): Engine {
  let busy = 0;
  let disposed = false;
  return {
    whenReady: () => Promise.resolve(),
    state: () => ({ ready: !disposed, backend: session.backend, poolSize: 1, busy, queued: 0 }),
    async run(job, signal) {
      signal?.throwIfAborted();
      busy++;
      try {
        return await runPipeline(job, session);
      } finally {
        busy--;
      }
    },
    async dispose() {
      disposed = true;
      await session.dispose();
    },
  };
}
