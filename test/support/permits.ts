// Counting the concurrency permits still held under a key, through the Limiter
// interface only, so the same check works for the in-process and the Redis limiter:
// take as many of `max` slots as are free, count them, give them back.
import type { Limiter, Permit } from "../../src/limits/index.ts";

/** Slots of `max` under `key` that somebody else holds right now. */
export async function heldPermits(limiter: Limiter, key: string, max: number): Promise<number> {
  const taken: Permit[] = [];
  try {
    for (let i = 0; i < max; i++) {
      const r = await limiter.acquire(key, max, 5_000);
      if (!r.ok) break;
      taken.push(r.permit);
    }
    return max - taken.length;
  } finally {
    for (const p of taken) await p.release();
  }
}

/** The permit keys the gateway takes for a live call of `orgId` (see src/gateway/removebg.ts). */
export const orgLiveKey = (orgId: string) => `org-live:${orgId}`;
export const GLOBAL_KEY = "global";

/**
 * The global permit set is shared by everything on one limiter store, so on Redis it
 * may hold leases of an earlier run that died (they expire after the deadline + 10 s).
 * Suites take this count before they start; the function returned says how many more
 * are held now (never below 0: such an old lease may run out during the suite).
 */
export async function globalBaseline(limiter: Limiter, max: number): Promise<() => Promise<number>> {
  const before = await heldPermits(limiter, GLOBAL_KEY, max);
  return async () => Math.max(0, (await heldPermits(limiter, GLOBAL_KEY, max)) - before);
}
