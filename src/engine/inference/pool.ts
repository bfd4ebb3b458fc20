// A fixed-size pool of worker threads, each holding one model session. Jobs wait
// in one FIFO queue and go to whichever worker is free; a worker runs one job at a time,
// and hears "idle" after an answer when no job is waiting for it.
// A worker that dies mid-job fails that job (code inference_failed: the work had begun,
// so it must not be resent) and is replaced, so the pool keeps its size. Nothing here
// knows about models: the worker entry decides what init and a job mean.
import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "./module-worker.ts";
import { packViews, unpackViews } from "./thread-views.ts";
import { InferenceError, messageOf, type InferenceErrorCode } from "./errors.ts";
import type { FromWorker, ToWorker, TransferList, WireError } from "./worker-protocol.ts";

export interface PoolOptions {
  size: number;
  /** The worker entry module; it must call serveWorker. May be a .ts file. */
  workerUrl: URL;
  /** Structured-cloned to every worker's init. */
  workerData: unknown;
  /**
   * Each worker's own init data instead, made as it starts (a replacement too): what it
   * returns is sent, its `transfer` moved (a port of the worker's own).
   */
  spawnData?: () => { data: unknown; transfer?: TransferList };
  /** Replace a worker that dies after the start (default). false: the pool fails instead, every job then rejected. */
  restart?: boolean;
  /**
   * After a worker's thread is ended on dispose, wait for its exit and this long more
   * before dispose resolves (gpu-engine.ts: a GPU thread drops its device as it ends).
   */
  afterExitMs?: number;
  /** A worker not ready within this long counts as failed to start. Default 300 s. */
  startTimeoutMs?: number;
  /** First wait before restarting a replacement that failed to start; doubles up to 60 s. Default 1 s. */
  restartDelayMs?: number;
  /** How long dispose lets running jobs and the workers' own dispose take. Default 10 s. */
  closeTimeoutMs?: number;
}

export interface PoolInfo {
  size: number;
  /** The `backend` field of the workers' info, when they report one. */
  backend?: string;
  /** What each worker's init returned. */
  workers: unknown[];
}

export interface PoolStats {
  size: number;
  busy: number;
  queued: number;
  /** Started, not disposed, and at least one worker alive to take jobs. */
  ready: boolean;
  backend?: string;
  /** Workers replaced after dying. */
  restarts: number;
  /** Why the pool can take no job: its start failed, or (restart false) a worker stopped. */
  failed?: string;
}

export interface WorkerPool<Job, Out> {
  ready(): Promise<PoolInfo>;
  /**
   * `signal`: aborting removes a queued job and rejects with the signal's reason; a job a
   * worker has already begun is rejected at once too, but the worker finishes it (a model
   * run cannot be interrupted) and its result is dropped.
   */
  run(job: Job, transfer?: TransferList, signal?: AbortSignal): Promise<Out>;
  stats(): PoolStats;
  dispose(): Promise<void>;
}

interface Pending {
  id: number;
  job: unknown;
  transfer?: TransferList;
  resolve(out: unknown): void;
  reject(err: Error): void;
  /** Settles with the job, either way; dispose waits on it. */
  done: Promise<void>;
}

interface Slot {
  worker?: Worker;
  state: "starting" | "idle" | "busy" | "closing" | "down";
  job?: Pending;
  info?: unknown;
  startTimer?: ReturnType<typeof setTimeout>;
  restartTimer?: ReturnType<typeof setTimeout>;
  failedStarts: number;
  /** Set while closing: called when the worker reports its dispose done. */
  onClosed?: () => void;
}

const OUR_CODES: ReadonlySet<string> = new Set<InferenceErrorCode>(["inference_failed", "model_unavailable", "shutting_down"]);

/** A worker's error as an InferenceError; foreign codes (ERR_..., ENOENT) become `fallback`. */
const errorFrom = (fallback: InferenceErrorCode, wire: WireError) =>
  new InferenceError(wire.code && OUR_CODES.has(wire.code) ? (wire.code as InferenceErrorCode) : fallback, wire.message);

export function createWorkerPool<Job, Out>(opts: PoolOptions): WorkerPool<Job, Out> {
  if (!Number.isInteger(opts.size) || opts.size < 1) throw new RangeError("pool size must be a positive integer");
  const startTimeoutMs = opts.startTimeoutMs ?? 300_000;
  const restartDelayMs = opts.restartDelayMs ?? 1000;
  const closeTimeoutMs = opts.closeTimeoutMs ?? 10_000;

  const slots: Slot[] = Array.from({ length: opts.size }, () => ({ state: "down", failedStarts: 0 }));
  const queue: Pending[] = [];
  let nextId = 1;
  let started = false; // every worker has been ready once
  let failure: Error | undefined; // the initial start failed: the pool is unusable
  let disposing = false;
  let restarts = 0;
  let backend: string | undefined;

  let settleReady!: { resolve(info: PoolInfo): void; reject(err: Error): void };
  const readyPromise = new Promise<PoolInfo>((resolve, reject) => (settleReady = { resolve, reject }));
  readyPromise.catch(() => {}); // reported through ready(); not an unhandled rejection

  function spawn(slot: Slot): void {
    const own = opts.spawnData?.();
    const worker = own ? startModuleWorker(opts.workerUrl, own.data, own.transfer) : startModuleWorker(opts.workerUrl, opts.workerData);
    slot.worker = worker;
    setState(slot, "starting");
    slot.startTimer = setTimeout(() => {
      if (slot.worker !== worker) return;
      startFailed(slot, `worker did not become ready within ${startTimeoutMs} ms`);
    }, startTimeoutMs);
    let lastError: string | undefined;

    worker.on("message", (msg: FromWorker) => {
      if (slot.worker !== worker) return;
      switch (msg.type) {
        case "ready":
          clearTimeout(slot.startTimer);
          setState(slot, "idle");
          slot.info = msg.info;
          slot.failedStarts = 0;
          onWorkerReady();
          dispatch();
          break;
        case "init-failed":
          startFailed(slot, errorFrom("model_unavailable", msg.error).message);
          break;
        case "result":
        case "error": {
          const job = slot.job;
          if (!job || job.id !== msg.id) return;
          slot.job = undefined;
          if (slot.state === "busy") setState(slot, "idle");
          if (msg.type === "result") job.resolve(unpackViews(msg.result));
          else job.reject(errorFrom("inference_failed", msg.error));
          dispatch();
          // Nothing queued for it: the worker learns at once that no job follows its answer.
          if (slot.state === "idle") worker.postMessage({ type: "idle" } satisfies ToWorker);
          break;
        }
        case "closed":
          slot.onClosed?.();
          break;
      }
    });
    worker.on("error", (err) => {
      lastError = messageOf(err); // an exit event follows
    });
    worker.on("exit", (exitCode) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      clearTimeout(slot.startTimer);
      const why = lastError ?? `worker exited with code ${exitCode}`;
      const wasStarting = slot.state === "starting";
      slot.state = "down";
      if (slot.job) {
        const job = slot.job;
        slot.job = undefined;
        job.reject(
          disposing
            ? new InferenceError("shutting_down", "the inference pool was closed during the job")
            : new InferenceError("inference_failed", `inference worker died during the job: ${why}`),
        );
      }
      if (disposing) return;
      if (wasStarting) startFailed(slot, why);
      else if (opts.restart === false) fail(new InferenceError("inference_failed", `inference worker stopped: ${why}`));
      else {
        restarts++;
        spawn(slot);
      }
    });
  }

  function startFailed(slot: Slot, why: string): void {
    clearTimeout(slot.startTimer);
    const worker = slot.worker;
    slot.worker = undefined; // events of the old worker are ignored from here on
    slot.state = "down";
    void worker?.terminate();
    if (disposing) return;
    if (!started) {
      fail(new InferenceError("model_unavailable", `inference worker failed to start: ${why}`));
      return;
    }
    // A replacement that cannot start: try again later, backing off, until dispose.
    slot.failedStarts++;
    const delay = Math.min(60_000, restartDelayMs * 2 ** (slot.failedStarts - 1));
    slot.restartTimer = setTimeout(() => {
      if (!disposing) spawn(slot);
    }, delay);
    // A pool with no worker left must not keep an otherwise finished process alive.
    slot.restartTimer.unref?.();
  }

  /**
   * A worker keeps the process alive only while it starts or works: an idle pool that its
   * owner forgot to dispose must not hang the process (a library user's script or test
   * run would never exit). Node terminates unreferenced workers at exit.
   */
  function setState(slot: Slot, state: Slot["state"]): void {
    slot.state = state;
    const worker = slot.worker;
    if (!worker) return;
    if (state === "starting" || state === "busy" || state === "closing") worker.ref?.();
    else worker.unref?.();
  }

  function fail(err: Error): void {
    if (failure) return;
    failure = err;
    settleReady.reject(err);
    for (const job of queue.splice(0)) job.reject(err);
    for (const slot of slots) {
      clearTimeout(slot.startTimer);
      const worker = slot.worker;
      slot.worker = undefined;
      slot.state = "down";
      void worker?.terminate();
    }
  }

  function onWorkerReady(): void {
    if (started || failure) return;
    if (!slots.every((s) => s.state === "idle")) return;
    started = true;
    const workers = slots.map((s) => s.info);
    const first = workers[0] as { backend?: unknown } | undefined;
    backend = typeof first?.backend === "string" ? first.backend : undefined;
    settleReady.resolve({ size: slots.length, backend, workers });
  }

  function dispatch(): void {
    for (const slot of slots) {
      if (queue.length === 0) return;
      if (slot.state !== "idle" || !slot.worker) continue;
      const job = queue.shift()!;
      setState(slot, "busy");
      slot.job = job;
      try {
        slot.worker.postMessage({ type: "job", id: job.id, job: packViews(job.job) } satisfies ToWorker, job.transfer);
      } catch (err) {
        // The job could not be cloned: nothing reached the worker, which stays free.
        slot.job = undefined;
        setState(slot, "idle");
        job.reject(new InferenceError("inference_failed", `cannot send the job to a worker: ${messageOf(err)}`, { cause: err }));
      }
    }
  }

  async function closeSlot(slot: Slot): Promise<void> {
    clearTimeout(slot.startTimer);
    clearTimeout(slot.restartTimer);
    const worker = slot.worker;
    if (!worker) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, closeTimeoutMs)));
    try {
      if (slot.job) await Promise.race([slot.job.done, deadline]);
      if (slot.state === "idle") {
        setState(slot, "closing");
        const closed = new Promise<void>((resolve) => {
          slot.onClosed = resolve;
          worker.once("exit", () => resolve());
        });
        worker.postMessage({ type: "close" } satisfies ToWorker);
        await Promise.race([closed, deadline]);
      }
    } finally {
      clearTimeout(timer);
    }
    // Threads the model runtime started keep a worker alive after its port closes, so
    // the worker is ended here rather than left to exit by itself.
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    await worker.terminate();
    if (opts.afterExitMs) {
      let wait: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([exited, new Promise<void>((r) => (wait = setTimeout(r, closeTimeoutMs)))]);
      clearTimeout(wait);
      await new Promise((r) => setTimeout(r, opts.afterExitMs));
    }
  }

  for (const slot of slots) spawn(slot);

  return {
    ready: () => readyPromise,
    run(job, transfer, signal) {
      if (disposing) return Promise.reject(new InferenceError("shutting_down", "the inference pool is closed"));
      if (failure) return Promise.reject(failure);
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<Out>((resolve, reject) => {
        let markDone!: () => void;
        const done = new Promise<void>((r) => (markDone = r));
        const onAbort = () => {
          const at = queue.indexOf(pending);
          if (at >= 0) queue.splice(at, 1);
          markDone();
          reject(signal!.reason);
        };
        const settled = () => signal?.removeEventListener("abort", onAbort);
        const pending: Pending = {
          id: nextId++,
          job,
          transfer,
          done,
          resolve: (out) => (settled(), markDone(), resolve(out as Out)),
          reject: (err) => (settled(), markDone(), reject(err)),
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        queue.push(pending);
        dispatch();
      });
    },
    stats() {
      const alive = slots.filter((s) => s.state === "idle" || s.state === "busy").length;
      return {
        size: slots.length,
        busy: slots.filter((s) => s.state === "busy").length,
        queued: queue.length,
        ready: started && !failure && !disposing && alive > 0,
        backend,
        restarts,
        ...(failure ? { failed: failure.message } : {}),
      };
    },
    async dispose() {
      if (disposing) return;
      disposing = true;
      for (const job of queue.splice(0)) job.reject(new InferenceError("shutting_down", "the inference pool was closed before the job started"));
      if (!started && !failure) settleReady.reject(new InferenceError("shutting_down", "the inference pool was closed while starting"));
      await Promise.all(slots.map(closeSlot));
    },
  };
}
