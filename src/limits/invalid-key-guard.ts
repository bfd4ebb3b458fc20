// Per-IP guard against key guessing (spec §5.9, §7): more than `limit` invalid keys from
// one IP within `windowMs` → 429 rate_limited with Retry-After until the window lets the
// IP back in. The gateway calls check() before any database lookup, so a blocked IP costs
// one limiter call, and recordInvalid() after a key turned out invalid.
import { checkPositiveInt, type Limiter } from "./limiter.ts";

export interface InvalidKeyGuardOptions {
  /** Invalid keys allowed per window; the next request is blocked (default 20). */
  limit?: number;
  /** Window length in ms (default 60 000). */
  windowMs?: number;
}

export interface InvalidKeyGuard {
  /** retryAfterS is whole seconds (≥ 1) when blocked, 0 otherwise. Rejects if the limiter is unavailable. */
  check(ip: string): Promise<{ blocked: boolean; retryAfterS: number }>;
  /** Counts one more invalid key from `ip`; resolves to the count in the window. */
  recordInvalid(ip: string): Promise<number>;
  /** Invalid keys allowed per window: a count above it means the address is over. */
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
    async check(ip) {
      const { over, retryAfterMs } = await limiter.isOver(keyFor(ip), limit, windowMs);
      return { blocked: over, retryAfterS: over ? retryAfterSeconds(retryAfterMs) : 0 };
    },
    recordInvalid(ip) {
      return limiter.record(keyFor(ip), windowMs);
    },
  };
}

/** Retry-After is whole seconds; round up so a client that obeys it is not refused again. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
