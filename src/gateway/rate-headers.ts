// X-RateLimit-Limit / -Remaining / -Reset on every answer to an authenticated removebg
// call, as the mirrored API sends them (its clients parse them). Which limit they
// describe (docs/DECISIONS.md "Which limit X-RateLimit-* describe"):
// - test key: its per-minute window (10 calls), the limit a test client meets first;
// - live key: the tightest spending limit (org daily, app daily, app monthly), in KRW,
//   because concurrency has no count to run down and no reset time.
// Reset is the Unix time (seconds) at which Remaining is back to Limit.
import { H } from "../http/headers.ts";
import type { Limiter } from "../limits/index.ts";
import type { KeyContext, MoneyPort } from "./ports.ts";
import type { SpendAllowance } from "../billing/spend-allowance.ts";

/** Test keys: calls per minute (spec §5.3). */
export const TEST_PER_MINUTE = 10;
export const TEST_WINDOW_MS = 60_000;
export const testMinuteKey = (keyId: string) => `test-minute:${keyId}`;

export interface RateHeaderDeps {
  limiter: Limiter;
  now: () => number;
  allowance: MoneyPort["allowance"];
}

/**
 * Read after the request's own steps are done, so the numbers include this call. Throws
 * when the stores cannot say (the answer then goes without these headers). `known`: a live key's allowance already in hand (its
 * capture reported it), so nothing is read.
 */
export async function rateLimitHeaders(key: KeyContext, deps: RateHeaderDeps, known?: SpendAllowance): Promise<Record<string, string>> {
  const now = deps.now();
  if (key.kind === "test") {
    const k = testMinuteKey(key.keyId);
    const used = await callsInWindow(deps.limiter, k, TEST_PER_MINUTE);
    // isOver(…, 1) says when the count drops below 1: the newest call leaves the window.
    const clear = used === 0 ? 0 : (await deps.limiter.isOver(k, 1, TEST_WINDOW_MS)).retryAfterMs;
    return headers(TEST_PER_MINUTE, TEST_PER_MINUTE - used, now + clear);
  }
  const a = known ?? (await deps.allowance(key));
  return headers(a.limitKrw, a.remainingKrw, a.resetAt);
}

function headers(limit: number, remaining: number, resetAtMs: number): Record<string, string> {
  return {
    [H.rateLimit]: String(limit),
    [H.rateRemaining]: String(Math.max(0, Math.min(limit, remaining))),
    [H.rateReset]: String(Math.ceil(resetAtMs / 1000)),
  };
}

/**
 * The sliding log's count without recording a call: isOver(key, n) is true exactly
 * when n or more calls are in the window, so a binary search over 1..limit finds it.
 */
async function callsInWindow(limiter: Limiter, key: string, limit: number): Promise<number> {
  let lo = 0; // known: at least lo calls
  let hi = limit; // known: at most hi calls (the window never holds more than the limit)
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if ((await limiter.isOver(key, mid, TEST_WINDOW_MS)).over) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
