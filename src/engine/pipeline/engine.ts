// The removal engine: a pool of workers, each with one model session, running the
// whole pipeline. Built once at start; the sessions start in the background so the HTTP
// server can answer /healthz (and 503 service_not_ready) meanwhile. Ready means every
// worker holds a created session; no inference is run before the first job. On a GPU the
// workers share one session in a thread of its own instead (gpu-engine.ts).
import type { MessagePort } from "node:worker_threads";
import { moduleBeside } from "../inference/module-url.ts";
import { createWorkerPool, type WorkerPool } from "../inference/pool.ts";
import type { createMaskSession } from "../inference/session.ts";
import type { PipelineJob, PipelineResult } from "./pipeline.ts";
import { exposedGc, releasesAfter, RELEASE_WHEN_IDLE_MS } from "./release-memory.ts";

export type SessionSettings = Parameters<typeof createMaskSession>[0];

/** A pool worker's settings: its session's, or (`sessionPort`) a port to the session thread it shares (gpu-engine.ts). */
export type WorkerSettings = SessionSettings & { sessionPort?: MessagePort };

export interface EngineState {
  ready: boolean;
  failed?: string;
  backend?: string;
  /** The manifest name of the model the sessions run (set by openEngine). */
  model?: string;
  poolSize: number;
  busy: number;
  queued: number;
  /** Helper threads each worker splits its pixel steps with (pipeline-bands.ts); 0: none. */
  bandHelpers?: number;
  /** A warm inference's milliseconds, measured at start (a session on a GPU: gpu-engine.ts). */
  warmRunMs?: number;
  /** On a GPU: pictures one run takes at most, and the runs and pictures so far (how well batches form). */
  gpuBatches?: { max: number; runs: number; pictures: number };
  /** auto on a GPU host: where the engine is in handing its jobs from WebAssembly to the GPU (gpu-handover.ts). */
  gpuPhase?: "starting" | "running" | "gave-way";
  /** The model is auto's GPU form of the one asked for (open-engine.ts). */
  gpuForm?: boolean;
  /** Why auto's GPU form did not start, when the engine runs the CPU's model instead (open-engine.ts). */
  gpuFallback?: string;
  /** What the GPU check found at start: the adapter, or why a GPU present goes unused (library/gpu-start-report.ts). */
  gpu?: import("../inference/gpu-doctor.ts").GpuDiagnosisSummary;
}

/** What a pipeline worker's init reports (pipeline-worker.ts). */
export interface PipelineWorkerInfo {
  backend: string;
  bandHelpers: number;
}

export interface Engine {
  /** Resolves when every worker has its session; rejects if they cannot start. */
  whenReady(): Promise<void>;
  state(): EngineState;
  /**
   * The job's image buffer moves to the worker: pass a buffer nobody else reads. `signal`
   * withdraws a queued job (see WorkerPool.run).
   */
  run(job: PipelineJob, signal?: AbortSignal): Promise<PipelineResult>;
  dispose(): Promise<void>;
  /** An engine that changes backend as it starts (gpu-handover.ts): resolves once it runs on its last one. */
  settled?(): Promise<void>;
}

export interface EngineOptions {
  poolSize: number;
  session: SessionSettings;
  startTimeoutMs?: number;
  /** Each worker's port to the session thread the workers share (gpu-engine.ts), made as the worker starts. */
  sessionPort?: () => MessagePort;
  /**
   * Also collect the calling thread's garbage once idle after a large job, where gc() is
   * exposed: the service's (its HTTP thread is ours). A library caller's heap is theirs.
   */
  collectCallingThread?: boolean;
}

export function createEngine(opts: EngineOptions): Engine {
  const pool: WorkerPool<PipelineJob, PipelineResult> = createWorkerPool<PipelineJob, PipelineResult>({
    size: opts.poolSize,
    workerUrl: moduleBeside(import.meta.url, "./pipeline-worker"),
    workerData: opts.session satisfies WorkerSettings,
    ...(opts.sessionPort
      ? {
          spawnData: () => {
            const port = opts.sessionPort!();
            return { data: { ...opts.session, sessionPort: port } satisfies WorkerSettings, transfer: [port] };
          },
        }
      : {}),
    startTimeoutMs: opts.startTimeoutMs ?? 300_000,
  });
  let ready = false;
  let failed: string | undefined;
  let backend: string | undefined;
  let bandHelpers: number | undefined;
  const warm = pool.ready().then(
    (info) => {
      ready = true;
      backend = (info as { backend?: string } | undefined)?.backend;
      // Every worker starts the same way; the first one's report stands for all.
      const first = info.workers[0] as PipelineWorkerInfo | undefined;
      bandHelpers = first?.bandHelpers;
    },
    (err: unknown) => {
      failed = err instanceof Error ? err.message : String(err);
      throw err;
    },
  );
  warm.catch(() => {}); // observed through state() and whenReady()

  // The calling thread's share of a large job (the upload and the PNG that came back, a few
  // MB each): garbage that an idle thread never collects. With collectCallingThread, it is
  // collected as the workers collect theirs (release-memory.ts), once no job has run for
  // RELEASE_WHEN_IDLE_MS after a large one.
  let owed = false; // a large job ran since the last collection
  let idleCollect: ReturnType<typeof setTimeout> | undefined;
  const collectWhenIdle = () => {
    clearTimeout(idleCollect);
    idleCollect = setTimeout(() => {
      const { busy, queued } = pool.stats();
      if (busy + queued > 0) return; // the job in flight reschedules when it ends
      owed = false;
      exposedGc()?.();
    }, RELEASE_WHEN_IDLE_MS);
    idleCollect.unref?.();
  };

  return {
    whenReady: () => warm,
    state() {
      const s = pool.stats();
      return { ready, failed, backend: backend ?? s.backend, poolSize: s.size, busy: s.busy, queued: s.queued, bandHelpers };
    },
    async run(job, signal) {
      if (opts.collectCallingThread && releasesAfter(job.image)) owed = true; // read before the buffer moves to the worker
      try {
        return await pool.run(job, [job.image.buffer as ArrayBuffer], signal);
      } finally {
        if (owed) collectWhenIdle();
      }
    },
    dispose: () => {
      clearTimeout(idleCollect);
      return pool.dispose();
    },
  };
}
