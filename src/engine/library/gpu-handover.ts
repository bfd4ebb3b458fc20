// auto on a GPU host is never slower than the CPU: WebAssembly serves from the start while
// the GPU's engine starts beside it (its session, shader compiles and a warm-up run take
// seconds), and the GPU takes the jobs once it is warm. The GPU's start waits for
// WebAssembly's first cut-out (or a quiet moment without one): on an H100 host, a start
// beside that first 12 MP cut-out made it 0.8 s slower than WebAssembly's alone. A job runs where it is sent and is
// never moved; jobs still waiting when the GPU is ready go to the GPU. The CPU's engine is
// disposed once its last job is done. If the GPU's engine does not start, or stops later,
// the CPU's model serves every job (opened again if it was already let go), and the state
// says why. Ready means ready to serve: when WebAssembly is (or the GPU, whichever first).
import { InferenceError, messageOf } from "../inference/errors.ts";
import type { Engine, EngineState } from "../pipeline/engine.ts";
import type { PipelineJob, PipelineResult } from "../pipeline/pipeline.ts";

/** "none": the host has no GPU to hand over to (startGpu found none): WebAssembly simply serves. */
type Phase = "starting" | "running" | "gave-way" | "none";

interface Waiting {
  job: PipelineJob;
  signal?: AbortSignal;
  resolve(r: PipelineResult): void;
  reject(e: unknown): void;
  onAbort?: () => void;
}

/** With WebAssembly ready and no job for this long, the GPU's start begins. */
export const QUIET_BEFORE_GPU_MS = 250;

export interface HandoverOptions {
  /** The model asked for on WebAssembly, opened now. */
  cpu: Engine;
  /** Opens the GPU form's engine, or resolves undefined when the host has no GPU for it; called once, when the gate opens. */
  startGpu: () => Promise<Engine | undefined>;
  /** The CPU's engine again, when the GPU stops after the first one was let go. */
  reopenCpu: () => Promise<Engine>;
}

/** An engine whose state says why auto's GPU form gave way to it. */
export function withGpuFallback(engine: Engine, reason: string): Engine {
  const state = engine.state.bind(engine);
  engine.state = () => ({ ...state(), gpuPhase: "gave-way", gpuFallback: reason });
  return engine;
}

export function handingOverToGpu(o: HandoverOptions): Engine & { settled(): Promise<void> } {
  let phase: Phase = "starting";
  let cpu: Engine | undefined = o.cpu;
  let cpuOpening: Promise<Engine> | undefined;
  let gpu: Engine | undefined;
  let fallback: string | undefined;
  let cpuRunning = 0;
  let disposed = false;
  const waiting: Waiting[] = [];

  let markSettled!: () => void;
  const settled = new Promise<void>((r) => (markSettled = r));
  const settle = (to: Phase, reason?: string) => {
    if (phase !== "starting") return;
    phase = to;
    fallback = reason;
    markSettled();
  };

  const cpuCapacity = () => Math.max(1, cpu?.state().poolSize ?? 1);

  /** The CPU's engine has done its last job and the GPU serves: let it go. */
  const releaseCpuIfIdle = () => {
    if (phase !== "running" || cpuRunning > 0 || !cpu) return;
    const old = cpu;
    cpu = undefined;
    void old.dispose().catch(() => {});
  };

  /** Sends waiting jobs where they can start now. */
  const pump = () => {
    while (waiting.length) {
      if (phase === "running" && gpu) {
        const w = waiting.shift()!;
        w.signal?.removeEventListener("abort", w.onAbort!);
        gpu.run(w.job, w.signal).then(w.resolve, w.reject);
        continue;
      }
      if (!cpu || cpuRunning >= cpuCapacity()) return;
      const w = waiting.shift()!;
      w.signal?.removeEventListener("abort", w.onAbort!);
      runOnCpu(cpu, w);
    }
  };

  const runOnCpu = (engine: Engine, w: Waiting) => {
    cpuRunning++;
    const run = engine.run(w.job, w.signal);
    if (!firstJob) {
      firstJob = run;
      onFirstJob?.();
    }
    run
      .then(w.resolve, w.reject)
      .finally(() => {
        cpuRunning--;
        pump();
        releaseCpuIfIdle();
      });
  };

  /** The GPU stopped or never started: the CPU's model serves from here on. */
  const giveWay = (reason: string) => {
    if (phase === "gave-way") return;
    const wasRunning = phase === "running";
    if (phase === "starting") settle("gave-way", reason);
    else {
      phase = "gave-way";
      fallback = reason;
    }
    const lost = gpu;
    gpu = undefined;
    void lost?.dispose().catch(() => {});
    if (wasRunning && !cpu && !disposed) {
      cpuOpening = o.reopenCpu().then((e) => {
        cpu = e;
        cpuOpening = undefined;
        pump();
        return e;
      });
      cpuOpening.catch((err: unknown) => {
        for (const w of waiting.splice(0)) w.reject(err);
      });
    }
    pump();
  };

  // The GPU's start begins once WebAssembly is ready and either its first job has ended or
  // none came for a moment; at once if WebAssembly cannot start.
  let firstJob: Promise<unknown> | undefined;
  const gate = o.cpu.whenReady().then(
    () =>
      new Promise<void>((release) => {
        const afterFirst = () => void firstJob!.then(
          () => release(),
          () => release(),
        );
        if (firstJob) return afterFirst();
        const timer = setTimeout(release, QUIET_BEFORE_GPU_MS);
        onFirstJob = () => {
          clearTimeout(timer);
          afterFirst();
        };
      }),
    () => {},
  );
  let onFirstJob: (() => void) | undefined;
  // Opening returns as soon as the engine's threads are starting; it is ready later.
  let gateOpen = false;
  const gpuOpened = gate.then(() => {
    gateOpen = true;
    return disposed ? Promise.reject(new InferenceError("shutting_down", "the engine was closed before its GPU started")) : o.startGpu();
  });
  const gpuStart = gpuOpened.then(
    async (engine) => {
      if (!engine) {
        settle("none");
        return;
      }
      gpu = engine;
      if (disposed) return;
      try {
        await engine.whenReady();
      } catch (err) {
        giveWay(messageOf(err));
        return;
      }
      if (disposed || phase !== "starting") return;
      settle("running");
      pump();
      releaseCpuIfIdle();
    },
    (err: unknown) => giveWay(messageOf(err)),
  );

  // Ready to serve when the CPU is; should the CPU's engine fail, the GPU's alone.
  const ready = o.cpu.whenReady().catch(async (cpuErr: unknown) => {
    await gpuStart;
    if (phase !== "running") throw cpuErr;
  });
  ready.catch(() => {}); // observed through whenReady() and state()

  function state(): EngineState {
    if (phase === "running" && gpu) {
      const g = gpu.state();
      // A GPU that stopped after the start (device lost) hands back to the CPU.
      if (g.failed) queueMicrotask(() => giveWay(`the GPU stopped: ${g.failed}`));
      return { ...g, gpuPhase: "running", queued: g.queued + waiting.length };
    }
    const c = cpu?.state() ?? { ready: false, poolSize: 1, busy: 0, queued: 0 };
    if (phase === "none") return { ...c, queued: c.queued + waiting.length };
    const base = { ...c, queued: c.queued + waiting.length, gpuPhase: phase };
    if (phase === "gave-way") return { ...base, ready: cpu !== undefined && c.ready, failed: cpu ? c.failed : undefined, gpuFallback: fallback };
    return base;
  }

  return {
    whenReady: () => ready,
    settled: () => settled,
    state,
    run(job, signal) {
      if (phase === "running" && gpu) {
        if (gpu.state().failed) giveWay(`the GPU stopped: ${gpu.state().failed}`);
        else return gpu.run(job, signal);
      }
      if (cpu && cpuRunning < cpuCapacity() && waiting.length === 0) {
        return new Promise<PipelineResult>((resolve, reject) => runOnCpu(cpu!, { job, signal, resolve, reject }));
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<PipelineResult>((resolve, reject) => {
        const w: Waiting = { job, signal, resolve, reject };
        w.onAbort = () => {
          const at = waiting.indexOf(w);
          if (at >= 0) waiting.splice(at, 1);
          reject(signal!.reason);
        };
        signal?.addEventListener("abort", w.onAbort, { once: true });
        waiting.push(w);
        pump();
      });
    },
    async dispose() {
      disposed = true;
      for (const w of waiting.splice(0)) w.reject(new InferenceError("shutting_down", "the engine was closed before the job started"));
      // A GPU still starting is not waited for: its threads end with its engine. One whose
      // start has not begun never will (disposed).
      const opened = gateOpen ? await gpuOpened.catch(() => undefined) : undefined;
      await Promise.all([opened?.dispose(), cpu?.dispose(), cpuOpening?.then((e) => e.dispose())].map((p) => p?.catch(() => {})));
    },
  };
}
