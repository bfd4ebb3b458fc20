// Per-IP guard against key guessing (spec §5.9, §7): more than `limit` invalid keys from
// one IP within `windowMs` → the next invalid key from it is answered 429 rate_limited
// with Retry-After until the window lets the IP back in, instead of 401.
//
// The guard judges invalid keys only. The gateway asks it after a key turned out missing,
// malformed or unknown, never for a valid key: a customer whose server shares an address
// with someone sending bad keys (an office, a cloud NAT, every client of a proxy that
// TRUST_PROXY does not name) keeps working (docs/DECISIONS.md, "A valid key from a
// blocked address"). A valid key's call therefore costs the guard nothing.
import { checkPositiveInt, type Limiter } from "./limiter.ts";

export interface InvalidKeyGuardOptions {
  /** Invalid keys allowed per window; the next one is refused 429 (default 20). */
  limit?: number;
  /** Window length in ms (default 60 000). */
  windowMs?: number;
}

export type InvalidKeyVerdict = { over: false } | { over: true; retryAfterS: number };

export interface InvalidKeyGuard {
  /**
   * One invalid key from `ip`: over the limit already, it is refused and not counted (a
   * flood does not lengthen its own block); otherwise it is counted, and refused when
   * that count passes the limit. Rejects if the limiter is unavailable.
   */
  invalidKey(ip: string): Promise<InvalidKeyVerdict>;
  /** Invalid keys allowed per window. */
  readonly limit: number;
  readonly windowMs: number;
}

export function createInvalidKeyGuard(limiter: Limiter, options: InvalidKeyGuardOptions = {}): InvalidKeyGuard {
  const limit = options.limit ?? 20;
  const windowMs = options.windowMs ?? 60_000;
  checkPositiveInt("limit", limit);
  checkPositiveInt("windowMs", windowMs);
  const keyFor = (ip: string) => `invalid-key:${ip}`;
  return {
    limit,
    windowMs,
    async invalidKey(ip) {
      const already = await limiter.isOver(keyFor(ip), limit, windowMs);
      if (already.over) return { over: true, retryAfterS: retryAfterSeconds(already.retryAfterMs) };
      // isOver and record are two steps, so concurrent guesses can all pass the first;
      // the count after recording decides too, which caps the 401s at the limit.
      const count = await limiter.record(keyFor(ip), windowMs);
      return count > limit ? { over: true, retryAfterS: retryAfterSeconds(windowMs) } : { over: false };
    },
  };
}

/** Retry-After is whole seconds; round up so a client that obeys it is not refused again. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
