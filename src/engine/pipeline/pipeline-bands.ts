// Row bands over helper threads, for one pool worker (see src/engine/imaging/row-bands.ts for
// what is split and why). A run's rows are cut into PIECES_PER_THREAD pieces per thread;
// the worker's own thread and each helper take pieces one at a time from a shared
// counter until none is left. All of it is in shared memory from an arena that lives as
// long as the worker: a 12 MP job needs about 80 MB of it, and reusing it spares the page
// faults of fresh buffers on every job (about 15 ms per 48 MB image here).
//
// A band thread that fails to start leaves the worker on inlineBands; one that dies later
// fails the job it was in (its band is half-written, so it cannot be redone safely) and
// every later job runs its bands on the worker's own thread.
import type { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { startModuleWorker } from "../inference/module-worker.ts";
import { moduleBeside } from "../inference/module-url.ts";
import { packViews } from "../inference/thread-views.ts";
import { bandRanges, runBand, runBeside, runPieces, type RowBands } from "../imaging/row-bands.ts";
import type { BandTaskArgs, BandTaskName, BesideResult, BesideTaskArgs, BesideTaskName } from "../imaging/band-tasks.ts";
import type { RowRange } from "../imaging/resample.ts";

/**
 * Helpers beyond the host's cores only take turns with the others, so a worker starts at
 * most one fewer than the cores it sees (its own thread is the other). Nothing else caps
 * the count: every band task splits its rows into PIECES_PER_THREAD pieces per thread
 * (the PNG into its 16 fixed segments, the grid solve into its 3 planes).
 */
export function bandHelperCap(cores = availableParallelism()): number {
  return Math.max(0, cores - 1);
}
const HELPER_START_TIMEOUT_MS = 60_000;
/**
 * Pieces per thread in a run. With two halves the worker's band of the 12 MP benchmark
 * cut-out took 27 ms against the helper's 60 (edge colours and alpha: the subject sat low
 * in the picture); with pieces the slower thread is left at most one piece behind. Each
 * piece makes its own filter tables (60-90 µs for a 12 MP resize or mask growth,
 * measured) and reads a few source rows twice at its edges: about 3 ms of CPU per 12 MP
 * job over both threads, against the 30-40 ms the balance saved.
 */
const PIECES_PER_THREAD = 8;

/** Worker → helper: take pieces of one task from `next` until none is left. */
export interface BandMessage {
  id: number;
  task: BandTaskName;
  args: unknown;
  pieces: RowRange[];
  /** One Int32 in shared memory: the number of the next piece to take. */
  next: Int32Array;
}
/** Worker → helper: run one beside task whole (RowBands.beside) and answer with its value. */
export interface BesideMessage {
  id: number;
  beside: BesideTaskName;
  args: unknown;
}
/**
 * Worker → helper, between jobs: collect garbage (the last job's views of shared memory)
 * where gc() is exposed; `release`: first drop what the helper's decoders keep.
 */
export interface CollectMessage {
  collect: true;
  release?: boolean;
}
/** Helper → worker: the band or beside task is done (or why not); the first message is `{ ready: true }`. */
export type BandReply = { id: number; ok: true; value?: unknown } | { id: number; ok: false; message: string } | { ready: true };

export interface ThreadBands extends RowBands {
  /**
   * Between jobs: has every helper collect its garbage (where gc() is exposed), which
   * holds the last job's shared memory alive while any thread still has a view of it.
   */
  collect(): void;
  /** As collect(), after giving the arena back: the next job takes fresh memory, sized to itself (release-memory.ts). */
  release(): void;
  dispose(): Promise<void>;
}

/** Memory shared with the helpers, handed out front to back and reused from the front by each job. */
class SharedArena {
  private chunk = new SharedArrayBuffer(0);
  private used = 0;
  /** Bytes asked for since begin(), to size one chunk that holds a whole job next time. */
  private asked = 0;

  begin(): void {
    if (this.asked > this.chunk.byteLength) this.chunk = new SharedArrayBuffer(this.asked);
    this.used = 0;
    this.asked = 0;
  }

  take(bytes: number): { buffer: SharedArrayBuffer; offset: number } {
    const size = Math.ceil(bytes / 8) * 8; // every view aligned for Float32Array (and Float64 to spare)
    this.asked += size;
    if (this.used + size <= this.chunk.byteLength) {
      const offset = this.used;
      this.used += size;
      return { buffer: this.chunk, offset };
    }
    // Past the chunk (the first job, or a bigger image than any before): a buffer of its
    // own for now; begin() grows the chunk to this job's total for the next one.
    return { buffer: new SharedArrayBuffer(size), offset: 0 };
  }

  /** Drops the chunk: the next job asks for fresh memory, and the one after reuses what that job took. */
  release(): void {
    this.chunk = new SharedArrayBuffer(0);
    this.used = 0;
    this.asked = 0;
  }
}

interface Helper {
  worker: Worker;
  pending: Map<number, { resolve(value: unknown): void; reject(e: Error): void }>;
  /** Running a beside task: run() leaves it out until it answers. */
  busy: boolean;
}

function startHelper(): Promise<Helper> {
  const worker = startModuleWorker(moduleBeside(import.meta.url, "./pipeline-bands-worker"));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`band helper not ready within ${HELPER_START_TIMEOUT_MS} ms`)), HELPER_START_TIMEOUT_MS);
    const fail = (e: Error) => {
      clearTimeout(timer);
      void worker.terminate();
      reject(e);
    };
    worker.once("error", fail);
    worker.once("exit", (code) => fail(new Error(`band helper exited (${code}) while starting`)));
    worker.once("message", (m: BandReply) => {
      clearTimeout(timer);
      worker.removeAllListeners("error");
      worker.removeAllListeners("exit");
      if (!("ready" in m)) return fail(new Error("band helper spoke before it was ready"));
      resolve({ worker, pending: new Map(), busy: false });
    });
  });
}

/** Starts `helpers` helper threads; undefined when any of them cannot start (the caller stays inline). */
export async function startThreadBands(helpers: number): Promise<ThreadBands | undefined> {
  const count = Math.min(bandHelperCap(), Math.max(0, Math.floor(helpers)));
  if (count === 0) return undefined;
  const started = await Promise.allSettled(Array.from({ length: count }, startHelper));
  const live = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  if (live.length < count) {
    await Promise.all(live.map((h) => h.worker.terminate()));
    return undefined;
  }
  return threadBands(live);
}

/**
 * Every typed array in a task's arguments must live in shared memory: a plain one would
 * reach the helper as a copy, and what the helper wrote into it would be lost without a
 * sign. Walks the few levels our arguments have (RGBA, grid, its channel planes).
 */
function assertShared(value: unknown, where: string, depth = 0): void {
  if (ArrayBuffer.isView(value)) {
    if (!(value.buffer instanceof SharedArrayBuffer)) throw new TypeError(`${where}: a ${value.constructor.name} outside shared memory (use bands.bytes/floats)`);
    return;
  }
  if (depth > 3 || value === null || typeof value !== "object") return;
  for (const [k, v] of Object.entries(value)) assertShared(v, `${where}.${k}`, depth + 1);
}

function threadBands(helpers: Helper[]): ThreadBands {
  const arena = new SharedArena();
  let nextId = 1;
  let broken: Error | undefined;
  let disposed = false;

  const stopAll = (why: Error) => {
    broken ??= why;
    for (const h of helpers) {
      for (const p of h.pending.values()) p.reject(why);
      h.pending.clear();
      h.worker.unref?.();
    }
  };
  for (const h of helpers) {
    // The pool worker's life decides the helpers': idle, they never keep it running alone.
    // While one has work, it is referenced: a thread awaiting its answer and nothing else
    // (a test, Deno's event loop) would otherwise see nothing left to wait for.
    h.worker.unref?.();
    h.worker.on("message", (m: BandReply) => {
      if ("ready" in m) return;
      const p = h.pending.get(m.id);
      if (!p) return;
      h.pending.delete(m.id);
      if (h.pending.size === 0) h.worker.unref?.();
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(`band helper: ${m.message}`));
    });
    h.worker.on("error", (e: Error) => stopAll(new Error(`band helper failed: ${e.message}`)));
    h.worker.on("exit", (code: number) => {
      if (!disposed) stopAll(new Error(`band helper exited (${code})`));
    });
  }

  const post = (h: Helper, message: (id: number) => BandMessage | BesideMessage) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      if (h.pending.size === 0) h.worker.ref?.();
      h.pending.set(id, { resolve, reject });
      h.worker.postMessage(message(id));
    });
  const send = (h: Helper, task: BandTaskName, args: unknown, pieces: RowRange[], next: Int32Array) =>
    post(h, (id) => ({ id, task, args: packViews(args), pieces, next: packViews(next) }));

  const collect = (release = false) => {
    if (broken || disposed) return;
    for (const h of helpers) h.worker.postMessage({ collect: true, release } satisfies CollectMessage);
  };

  return {
    get parts() {
      return broken ? 1 : helpers.length + 1;
    },
    begin: () => arena.begin(),
    bytes(n) {
      const { buffer, offset } = arena.take(n);
      return new Uint8Array(buffer, offset, n);
    },
    floats(n) {
      const { buffer, offset } = arena.take(n * 4);
      return new Float32Array(buffer, offset, n);
    },
    async run<T extends BandTaskName>(task: T, args: BandTaskArgs<T>, rows: number, align = 1) {
      if (broken) return runBand(task, args, { y0: 0, y1: rows });
      assertShared(args, task);
      const free = helpers.filter((h) => !h.busy);
      const pieces = bandRanges(rows, (free.length + 1) * PIECES_PER_THREAD, align);
      const next = new Int32Array(new SharedArrayBuffer(4));
      const theirs = free.map((h) => send(h, task, args, pieces, next));
      let ownError: unknown;
      try {
        // A piece that throws stops this thread taking more; the helpers take the rest.
        runPieces(task, args, pieces, next);
      } catch (e) {
        ownError = e;
      }
      // Wait for every helper even when our piece failed: they write the same memory.
      const settled = await Promise.allSettled(theirs);
      if (ownError !== undefined) throw ownError;
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
    async beside<T extends BesideTaskName>(task: T, args: BesideTaskArgs<T>): Promise<BesideResult<T>> {
      const h = broken ? undefined : helpers.find((x) => !x.busy);
      if (!h) return runBeside(task, args);
      assertShared(args, task);
      h.busy = true;
      try {
        return (await post(h, (id) => ({ id, beside: task, args: packViews(args) }))) as BesideResult<T>;
      } finally {
        h.busy = false;
      }
    },
    collect: () => collect(),
    release() {
      arena.release();
      collect(true);
    },
    async dispose() {
      disposed = true;
      stopAll(new Error("band helpers closed"));
      await Promise.all(helpers.map((h) => h.worker.terminate()));
    },
  };
}
