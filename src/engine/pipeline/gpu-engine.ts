// The engine on a GPU: one thread owns the WebGPU session (src/engine/inference/gpu-session-
// worker.ts) and several pipeline workers share it through ports (remote-session.ts). A
// pipeline worker decodes, resizes, composes and encodes on the CPU while the GPU infers for
// another, and the masks asked for while a run is on the GPU go together in the next run
// (a batch), so under load the GPU is kept fed and each run's fixed cost is shared. One
// session per process: sessions of their own would each hold the model's weights on the GPU
// and take turns on it anyway.
import { availableParallelism } from "node:os";
import { MessageChannel } from "node:worker_threads";
import { moduleBeside } from "../inference/module-url.ts";
import { createWorkerPool } from "../inference/pool.ts";
import type { Connect, GpuSessionInfo } from "../inference/gpu-session-worker.ts";
import { createEngine, type Engine, type SessionSettings } from "./engine.ts";
import { InferenceError } from "../inference/errors.ts";

/**
 * How a GPU host's cores go: pipeline workers (jobs in flight at once, so up to that many
 * pictures can meet in one GPU run) and threads each (the worker and its band helpers).
 * Four threads a worker keeps one large picture's pixel steps quick; more workers keep more
 * pictures moving (docs/MODEL.md, "The engine on a GPU").
 */
export function gpuPipelineShape(cores = availableParallelism(), workers?: number): { workers: number; threads: number } {
  const w = workers ?? Math.min(8, Math.max(2, Math.floor(cores / 4)));
  return { workers: w, threads: Math.max(1, Math.floor(cores / w)) };
}

/** How long a GPU thread's end is given, after its exit, to drop its device (see createGpuEngine). */
export const GPU_THREAD_SETTLE_MS = 300;

export interface GpuEngineOptions {
  /** The GPU session's settings (backend "webgpu"). */
  session: SessionSettings;
  /** Pipeline workers and their threads (gpuPipelineShape). */
  workers: number;
  threads: number;
  startTimeoutMs?: number;
  collectCallingThread?: boolean;
}

export function createGpuEngine(opts: GpuEngineOptions): Engine {
  const startTimeoutMs = opts.startTimeoutMs ?? 300_000;
  // The GPU thread is not replaced if it stops: a lost device is not won back by a new
  // session on it, and the pipeline workers' ports led to the old one. The engine is then
  // failed, and the handover (src/engine/library/gpu-handover.ts) goes back to the CPU.
  const gpu = createWorkerPool<Connect | { batches: true }, { runs: number; pictures: number }>({
    size: 1,
    workerUrl: moduleBeside(import.meta.url, "../inference/gpu-session-worker"),
    workerData: opts.session,
    startTimeoutMs,
    restart: false,
    // The thread drops its WebGPU device as it ends; a process that exits meanwhile crashed
    // in NVIDIA's Vulkan driver (SIGSEGV at exit, 20 of 20 processes on an H100 host; the
    // race is github.com/gfx-rs/wgpu/issues/8365). Dispose resolves once the thread is gone.
    afterExitMs: GPU_THREAD_SETTLE_MS,
  });
  // The pipeline workers start once the GPU's session is warm: under auto, WebAssembly's
  // first cut-outs run meanwhile on the same cores, and the GPU's start then takes one of
  // them (its session thread) instead of every worker's and band helper's start-up too.
  let pipelines: Engine | undefined;
  let disposed = false;
  let info: GpuSessionInfo | undefined;
  let batches = { runs: 0, pictures: 0 };
  const ready = gpu.ready().then(async (g) => {
    if (disposed) throw new InferenceError("shutting_down", "the engine was closed while its GPU session started");
    pipelines = createEngine({
      poolSize: opts.workers,
      session: { ...opts.session, threads: opts.threads },
      startTimeoutMs,
      collectCallingThread: opts.collectCallingThread,
      sessionPort: () => {
        const channel = new MessageChannel();
        gpu.run({ connect: channel.port1 }, [channel.port1]).catch(() => {});
        return channel.port2;
      },
    });
    await pipelines.whenReady();
    info = g.workers[0] as GpuSessionInfo;
  });
  ready.catch(() => {}); // observed through state() and whenReady()
  // The GPU thread's counts, refreshed in the background whenever the state is read.
  let asking = false;
  const refreshBatches = () => {
    if (asking || !info || !gpu.stats().ready) return;
    asking = true;
    gpu.run({ batches: true }).then(
      (b) => ((batches = b), (asking = false)),
      () => (asking = false),
    );
  };

  return {
    whenReady: () => ready,
    state() {
      const g = gpu.stats();
      const p = pipelines?.state() ?? { ready: false, poolSize: opts.workers, busy: 0, queued: 0 };
      refreshBatches();
      return {
        ...p,
        ready: p.ready && g.ready && info !== undefined,
        failed: g.failed ?? p.failed,
        backend: info?.backend ?? "webgpu",
        warmRunMs: info?.warmRunMs,
        ...(info ? { gpuBatches: { max: info.maxBatch, ...batches } } : {}),
      };
    },
    async run(job, signal) {
      // The handover sends no job before the engine is ready; a direct caller waits for it.
      await ready;
      return pipelines!.run(job, signal);
    },
    async dispose() {
      disposed = true;
      await pipelines?.dispose();
      await gpu.dispose();
    },
  };
}
