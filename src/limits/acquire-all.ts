// Several concurrency permits for one request, all or none: a live call needs its org's
// slot (2) and a slot under the global cap, a test call its key's slot (1) and the global
// cap. Taken in the order given, so every process asks in the same order and the
// narrower cap (listed first) refuses before a global slot is held for nothing.
import type { Limiter, Permit } from "./limiter.ts";

export interface PermitRequest {
  key: string;
  max: number;
  leaseMs: number;
}

export type AcquireAllResult =
  | { ok: true; permits: Permit[]; release(): Promise<void> }
  | { ok: false; failedKey: string; failedIndex: number; retryAfterMs: number };

export async function acquireAll(limiter: Limiter, requests: readonly PermitRequest[]): Promise<AcquireAllResult> {
  const taken: Permit[] = [];
  try {
    for (const [index, req] of requests.entries()) {
      const got = await limiter.acquire(req.key, req.max, req.leaseMs);
      if (!got.ok) {
        await releaseAll(taken);
        return { ok: false, failedKey: req.key, failedIndex: index, retryAfterMs: got.retryAfterMs };
      }
      taken.push(got.permit);
    }
  } catch (err) {
    // Store unavailable half-way: give back what we hold, then let the caller answer 503.
    await releaseAll(taken);
    throw err;
  }
  return { ok: true, permits: taken, release: () => releaseAll(taken) };
}

/** Releases in reverse order of acquisition. Permit.release never rejects, so neither does this. */
export async function releaseAll(permits: readonly Permit[]): Promise<void> {
  for (let i = permits.length - 1; i >= 0; i--) await permits[i]!.release();
}
