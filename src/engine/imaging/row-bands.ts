// Splitting work by rows over threads. At 12 MP the pipeline's own steps (model input,
// mask upscale, edge colours, alpha) cost about 350 ms on one core while the other
// core idles; each of them makes every output row from the source alone, so the rows
// can be cut into bands and the bands made at once. RowBands is the seam: one
// implementation runs every band here (inlineBands: the library with workers: 0, the
// CLI's in-process use, tests), the pool worker's (src/engine/pipeline/pipeline-bands.ts)
// shares them with helper threads over shared memory: the rows are cut into more
// pieces than there are threads and each thread takes the next piece when it is done
// with one (runPieces), because rows cost unequal amounts (the subject against empty
// background) and a fixed half each left one thread waiting for the other.
import { BAND_TASKS, BESIDE_TASKS, type BandTaskArgs, type BandTaskName, type BesideResult, type BesideTaskArgs, type BesideTaskName } from "./band-tasks.ts";
import type { RowRange } from "./resample.ts";

export interface RowBands {
  /** Threads that share a run's bands: 1 when there is no helper. */
  readonly parts: number;
  /** Starts a job: memory from bytes()/floats() of the previous job may be reused from here on. */
  begin(): void;
  /** n bytes every band's thread can read and write, not zeroed, valid until the next begin(). */
  bytes(n: number): Uint8Array;
  /** As bytes(), for n float32 values. */
  floats(n: number): Float32Array;
  /**
   * Runs `task` over rows 0 ≤ y < rows, cut into bands whose inner edges fall on
   * multiples of `align`; resolves when every band is done. Every typed array in
   * `args` that band threads write or read must come from bytes()/floats().
   */
  run<T extends BandTaskName>(task: T, args: BandTaskArgs<T>, rows: number, align?: number): Promise<void>;
  /**
   * Runs `task` whole on a helper thread while this thread goes on, and resolves with its
   * result (without a helper: here, before the promise is returned). Typed arrays in
   * `args` that the task writes must come from bytes()/floats(). While it runs, run()
   * leaves that helper out, so rows never wait for it.
   */
  beside<T extends BesideTaskName>(task: T, args: BesideTaskArgs<T>): Promise<BesideResult<T>>;
}

/** The band edges for `parts` bands of `rows` rows, inner edges on multiples of `align`. */
export function bandRanges(rows: number, parts: number, align = 1): RowRange[] {
  const out: RowRange[] = [];
  let y0 = 0;
  for (let i = 1; i <= parts; i++) {
    const y1 = i === parts ? rows : Math.min(rows, Math.round((rows * i) / parts / align) * align);
    if (y1 > y0) out.push({ y0, y1 });
    y0 = Math.max(y0, y1);
  }
  return out;
}

/**
 * Takes pieces of `task` by number from the counter `next` (shared by every thread on
 * the run: Atomics.add hands each number out once) and runs them here, until none is left.
 */
export function runPieces<T extends BandTaskName>(task: T, args: BandTaskArgs<T>, pieces: readonly RowRange[], next: Int32Array): void {
  for (let k = Atomics.add(next, 0, 1); k < pieces.length; k = Atomics.add(next, 0, 1)) runBand(task, args, pieces[k]!);
}

/** Runs one band of a task on this thread. */
export function runBand<T extends BandTaskName>(task: T, args: BandTaskArgs<T>, rows: RowRange): void {
  (BAND_TASKS[task] as (a: BandTaskArgs<T>, r: RowRange) => void)(args, rows);
}

/** Every band on this thread, in plain memory. */
export const inlineBands: RowBands = {
  parts: 1,
  begin() {},
  bytes: (n) => new Uint8Array(n),
  floats: (n) => new Float32Array(n),
  async run(task, args, rows) {
    runBand(task, args, { y0: 0, y1: rows });
  },
  beside: runBeside,
};

/** Runs a beside task on this thread. */
export function runBeside<T extends BesideTaskName>(task: T, args: BesideTaskArgs<T>): Promise<BesideResult<T>> {
  return (BESIDE_TASKS[task] as (a: BesideTaskArgs<T>) => Promise<BesideResult<T>>)(args);
}
