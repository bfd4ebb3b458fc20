// Counts request-body bytes being received across all requests of this process, so a
// flood of large uploads is refused (503 with Retry-After) instead of exhausting memory.
// The Retry-After of such a refusal is how long the missing room should take to come
// back at the rate bodies have been finishing lately (bytes given back per second over
// the last RATE_WINDOW_MS); with nothing given back lately, FALLBACK_MS.
export interface ByteBudget {
  /** Reserves room for an upload expected to be up to `bytes` long; false when full. */
  tryTake(bytes: number): boolean;
  give(bytes: number): void;
  inUse(): number;
  /** Expected ms until `bytes` of room is free (for Retry-After). */
  untilRoomMs(bytes: number): number;
}

const RATE_WINDOW_MS = 10_000;
const FALLBACK_MS = 2000;

export function createByteBudget(limit: number, now: () => number = Date.now): ByteBudget {
  let used = 0;
  const given: { at: number; bytes: number }[] = [];
  const forget = (t: number) => {
    while (given.length && given[0]!.at <= t - RATE_WINDOW_MS) given.shift();
  };
  return {
    tryTake(bytes) {
      if (used + bytes > limit) return false;
      used += bytes;
      return true;
    },
    give(bytes) {
      used = Math.max(0, used - bytes);
      const t = now();
      forget(t);
      given.push({ at: t, bytes });
    },
    inUse: () => used,
    untilRoomMs(bytes) {
      const t = now();
      forget(t);
      const missing = used + bytes - limit;
      if (missing <= 0) return 0;
      const perMs = given.reduce((a, g) => a + g.bytes, 0) / RATE_WINDOW_MS;
      return perMs > 0 ? missing / perMs : FALLBACK_MS;
    },
  };
}
