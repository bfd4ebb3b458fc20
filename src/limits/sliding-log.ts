// Sorted-timestamp helpers for the in-process sliding-window log. The Redis Lua scripts
// (redis-scripts.ts) do the same arithmetic on a sorted set; keep the two in step.
//
// A hit at time t counts while now - t < windowMs, i.e. it leaves the window at
// t + windowMs. Times are whole milliseconds.

/** Drops the timestamps that have left the window (in place); returns the count left. */
export function dropExpired(times: number[], now: number, windowMs: number): number {
  const cutoff = now - windowMs;
  let first = 0;
  while (first < times.length && times[first]! <= cutoff) first++;
  if (first > 0) times.splice(0, first);
  return times.length;
}

/** Inserts `t` keeping the array sorted (the injected clock is not required to be monotonic). */
export function insertSorted(times: number[], t: number): void {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  times.splice(lo, 0, t);
}

/**
 * With `times` already trimmed to the window and holding at least `limit` entries: ms
 * until only limit - 1 remain, i.e. until the entry at index count - limit leaves.
 */
export function msUntilBelow(times: readonly number[], limit: number, now: number, windowMs: number): number {
  const edge = times[times.length - limit];
  if (edge === undefined) return 0;
  return Math.max(1, edge + windowMs - now);
}
