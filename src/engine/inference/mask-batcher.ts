// One session's runs, fed from many askers: a mask asked for while a run is on the GPU waits,
// and the next run takes it with the others of its size waiting behind the first (up to
// the session's maxBatch). A lone ask never waits for company; under load a run's fixed cost
// is shared. gpu-session-worker.ts feeds it from the pipeline workers' ports.
import type { InputSize, MaskSession } from "./session.ts";

export interface MaskBatcher {
  /** The mask for `rgb` at `size`, from the next run that can take it. */
  ask(rgb: Uint8Array, size: InputSize): Promise<Uint8Array>;
  /** Runs made and the pictures they took. */
  counts(): { runs: number; pictures: number };
}

interface Waiting {
  rgb: Uint8Array;
  size: InputSize;
  resolve(mask: Uint8Array): void;
  reject(err: unknown): void;
}

const sameSize = (a: InputSize, b: InputSize) => a.width === b.width && a.height === b.height;

export function createMaskBatcher(session: Pick<MaskSession, "run" | "runBatch" | "maxBatch">): MaskBatcher {
  const waiting: Waiting[] = [];
  let running = false;
  const counts = { runs: 0, pictures: 0 };

  /** One run with the first waiting ask and those of its size behind it, then the next. */
  const pump = () => {
    if (running || waiting.length === 0) return;
    const size = waiting[0]!.size;
    const take: Waiting[] = [];
    for (let i = 0; i < waiting.length && take.length < (session.maxBatch ?? 1); ) {
      if (sameSize(waiting[i]!.size, size)) take.push(...waiting.splice(i, 1));
      else i++;
    }
    running = true;
    counts.runs++;
    counts.pictures += take.length;
    const masks =
      take.length > 1 && session.runBatch
        ? session.runBatch(
            take.map((w) => w.rgb),
            size,
          )
        : session.run(take[0]!.rgb, size).then((m) => [m]);
    masks
      .then(
        (all) => take.forEach((w, k) => w.resolve(all[k]!)),
        (err: unknown) => take.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        running = false;
        pump();
      });
  };

  return {
    ask: (rgb, size) =>
      new Promise<Uint8Array>((resolve, reject) => {
        waiting.push({ rgb, size, resolve, reject });
        pump();
      }),
    counts: () => ({ ...counts }),
  };
}
