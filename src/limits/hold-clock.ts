// How long concurrency permits are held, measured by this process, so a call refused at
// a full cap can be told when a slot is likely to free: `max` holders that each hold a
// permit for about H free one every H / max on average (with the product's pool as the
// bottleneck this is its time per job ÷ workers, since every holder's time includes
// its wait in the queue). Holding times vary with load, so the average follows them
// (exponentially weighted). Before any permit of a group has been given back (a burst
// on a fresh process) the hint is used: where the product runs in this process, its
// time per job ÷ workers, i.e. how often a job ends; without one, one second.
// Lease expiry is no guide here: a running request renews its lease every third of it.

export type HoldGroup = "global" | "test" | "org-live";

export interface HoldClock {
  /** A permit of `group` was given back after being held `ms`. */
  record(group: HoldGroup, ms: number): void;
  /** Expected ms until one of `max` held permits of `group` frees. */
  untilRelease(group: HoldGroup, max: number): number;
}

export const FIRST_HOLD_GUESS_MS = 1000;

export function createHoldClock(firstGuessMs?: () => number | undefined): HoldClock {
  const avg = new Map<HoldGroup, number>();
  const guess = () => {
    const g = firstGuessMs?.();
    return g !== undefined && Number.isFinite(g) && g > 0 ? g : FIRST_HOLD_GUESS_MS;
  };
  return {
    record(group, ms) {
      if (!Number.isFinite(ms) || ms < 0) return;
      const prev = avg.get(group);
      avg.set(group, prev === undefined ? ms : prev * 0.8 + ms * 0.2);
    },
    untilRelease(group, max) {
      const h = avg.get(group);
      return h === undefined ? guess() : h / Math.max(1, max);
    },
  };
}
