// The product's queue order and its forecast, in one place so that what admission
// predicts is what dispatch does. Live (paid) jobs go before test jobs, arrival order
// within each class; a test job that has waited testMaxWaitMs goes before live ones,
// so test jobs cannot starve under a steady live load (their wait is bounded by
// testMaxWaitMs plus the jobs already promoted ahead of them).
import type { CallClass } from "../limits/test-share.ts";
import type { Tier } from "../contract/tiers.ts";

export interface QueuedJob {
  kind: CallClass;
  enqueuedAt: number;
  /** What it makes: a preview costs less than a full-size cut-out (admission.ts keeps an estimate per tier). */
  tier?: Tier;
}

/** Which queue the next free worker takes from at time `t`. */
export function pickClass(live: readonly QueuedJob[], test: readonly QueuedJob[], t: number, testMaxWaitMs: number): CallClass | undefined {
  const l = live[0];
  const x = test[0];
  if (!x) return l ? "live" : undefined;
  if (!l) return "test";
  return t - x.enqueuedAt >= testMaxWaitMs ? "test" : "live";
}

export interface Forecast<J> {
  /** Expected end of each queued job, in dispatch order. */
  ends: Map<J, number>;
}

/**
 * Plays the queue forward with each job taking `jobMs(job)`: each worker is free at
 * `freeAt` (now for an idle one, a running job's expected end otherwise), and the
 * next job by pickClass goes to the earliest free worker. Later arrivals are unknown,
 * so a test job's forecast assumes no more live jobs arrive.
 */
export function forecast<J extends QueuedJob>(
  freeAt: number[],
  live: readonly J[],
  test: readonly J[],
  jobMs: (job: J) => number,
  testMaxWaitMs: number,
): Forecast<J> {
  const free = [...freeAt].sort((a, b) => a - b);
  const l = [...live];
  const x = [...test];
  const ends = new Map<J, number>();
  for (;;) {
    const t = free.shift();
    if (t === undefined) break;
    const kind = pickClass(l, x, t, testMaxWaitMs);
    if (!kind) break;
    const job = (kind === "live" ? l : x).shift()!;
    const end = t + jobMs(job);
    ends.set(job, end);
    // Keep `free` sorted: insert the worker's next free time.
    const at = free.findIndex((f) => f > end);
    free.splice(at < 0 ? free.length : at, 0, end);
  }
  return { ends };
}
