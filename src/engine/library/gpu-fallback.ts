// When auto's GPU form of a model does not start on the GPU, the engine becomes the model
// asked for on the CPU (open-engine.ts), and its state says why.
import { messageOf } from "../inference/errors.ts";
import type { Engine } from "../pipeline/engine.ts";

/** An engine whose state says why auto's GPU form gave way to it. */
export function withGpuFallback(engine: Engine, reason: string): Engine {
  const state = engine.state.bind(engine);
  engine.state = () => ({ ...state(), gpuFallback: reason });
  return engine;
}

/**
 * The GPU form's engine while its worker starts; if that start fails, the CPU's engine
 * from `onCpu` takes its place (not ready meanwhile, and never reported as failed for the
 * GPU's sake). Jobs go to whichever engine is current.
 */
export function startingOrFallingBack(gpu: Engine, onCpu: () => Promise<Engine>): Engine {
  let current = gpu;
  let switching = false;
  const ready = gpu.whenReady().catch(async (err: unknown) => {
    switching = true;
    await gpu.dispose().catch(() => {});
    try {
      current = withGpuFallback(await onCpu(), messageOf(err));
    } finally {
      switching = false;
    }
    await current.whenReady();
  });
  return {
    whenReady: () => ready,
    state: () => (switching ? { ...current.state(), ready: false, failed: undefined } : current.state()),
    run: (job, signal) => current.run(job, signal),
    async dispose() {
      await ready.catch(() => {});
      await current.dispose();
    },
  };
}
