// Per-IP guard against key guessing (spec §5.9, §7): more than `limit` invalid keys from
// one IP within `windowMs` → 429 rate_limited with Retry-After until the window lets the
// IP back in. The gateway calls check() before any database lookup, so a blocked IP costs
// one limiter call, and recordInvalid() after a key turned out invalid.
//
// An address the limiter found clear is remembered as clear for CLEAR_MEMORY_MS, so a
// customer's server calling many times a second costs one limiter call per second for
// this check, not one per call (a third of a paid call's Redis calls). An
// invalid key from the address, recorded here, forgets it at once, so this process's own
// count blocks as exactly as before. A block that another gateway process (or another
// guard in this one) recorded applies here within CLEAR_MEMORY_MS; until then only calls
// with a valid key get through, since the first invalid one forgets the address
// (docs/DECISIONS.md "Addresses remembered as clear").
import { checkPositiveInt, type Limiter } from "./limiter.ts";

/** How long an address the limiter found clear is taken as clear without asking again. */
export const CLEAR_MEMORY_MS = 1000;
/** Addresses remembered at most; past it the memory starts again empty. */
const CLEAR_MEMORY_MAX = 10_000;

export interface InvalidKeyGuardOptions {
  /** Invalid keys allowed per window; the next request is blocked (default 20). */
  limit?: number;
  /** Window length in ms (default 60 000). */
  windowMs?: number;
  /** The clock the clear-address memory reads (default Date.now). */
  now?: () => number;
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
  const now = options.now ?? Date.now;
  const keyFor = (ip: string) => `invalid-key:${ip}`;
  /** Address → until when it counts as clear. */
  const clearUntil = new Map<string, number>();
  /** Checks of an address now asking the limiter; an invalid key recorded meanwhile marks them, so their answer is not remembered. */
  const asking = new Map<string, Set<{ forgotten: boolean }>>();
  return {
    limit,
    windowMs,
    async check(ip) {
      const until = clearUntil.get(ip);
      if (until !== undefined && now() < until) return { blocked: false, retryAfterS: 0 };
      const ticket = { forgotten: false };
      const tickets = asking.get(ip) ?? new Set();
      asking.set(ip, tickets.add(ticket));
      const askedAt = now();
      let answer: { over: boolean; retryAfterMs: number };
      try {
        answer = await limiter.isOver(keyFor(ip), limit, windowMs);
      } finally {
        tickets.delete(ticket);
        if (tickets.size === 0 && asking.get(ip) === tickets) asking.delete(ip);
      }
      if (answer.over || ticket.forgotten) clearUntil.delete(ip);
      else {
        if (clearUntil.size >= CLEAR_MEMORY_MAX) clearUntil.clear();
        clearUntil.set(ip, askedAt + CLEAR_MEMORY_MS);
      }
      return { blocked: answer.over, retryAfterS: answer.over ? retryAfterSeconds(answer.retryAfterMs) : 0 };
    },
    recordInvalid(ip) {
      clearUntil.delete(ip);
      for (const t of asking.get(ip) ?? []) t.forgotten = true;
      return limiter.record(keyFor(ip), windowMs);
    },
  };
}

/** Retry-After is whole seconds; round up so a client that obeys it is not refused again. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
