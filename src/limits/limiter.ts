// The one limits interface the gateway talks to. Two implementations sit behind it:
// memory-limiter.ts (embedded default, injectable clock) and redis-limiter.ts (shared
// between gateway processes, Redis server time). test/limits/limiter-contract.ts holds
// the behaviour both must show.
import type { AcquireAllResult, PermitRequest, Waiter } from "./acquire-all.ts";

export interface HitResult {
  allowed: boolean;
  /** Hits still allowed in the window after this one (0 when refused). */
  remaining: number;
  /** 0 when allowed; otherwise ms until enough old hits leave the window for one more. */
  retryAfterMs: number;
}

export interface OverResult {
  over: boolean;
  /** 0 when not over; otherwise ms until the count drops below the limit. */
  retryAfterMs: number;
}

export type AcquireResult = { ok: true; permit: Permit } | { ok: false; retryAfterMs: number };

export interface Limiter {
  /**
   * Sliding-window log: records one hit under `key` if fewer than `limit` hits happened
   * in the last `windowMs`; otherwise records nothing.
   */
  hit(key: string, limit: number, windowMs: number): Promise<HitResult>;
  /** Like hit but records nothing: are there already `limit` or more hits in the window? */
  isOver(key: string, limit: number, windowMs: number): Promise<OverResult>;
  /** Records one event without a limit check; resolves to the count in the window, this one included. */
  record(key: string, windowMs: number): Promise<number>;
  /**
   * Takes one of `max` concurrency slots under `key` as a lease that frees itself after
   * `leaseMs` unless renewed, so a holder that dies cannot keep the slot.
   */
  acquire(key: string, max: number, leaseMs: number): Promise<AcquireResult>;
  /**
   * Takes one permit per request, in the order given, all or none, as one atomic step
   * (one round trip to a shared store). Refused: nothing is held, and the answer names
   * the first request that found its slots full. The set's release() frees them all at
   * once; each Permit can still be renewed or released on its own.
   *
   * With a `waiter`, a refusal also keeps it a place in the line of the cap that refused
   * it, and a freed slot is held for the first place in line (waiting-line.ts): it is
   * admitted when it comes back within its Retry-After plus HANDOVER_GRACE_MS, ahead of
   * callers that did not wait. Without one, the call goes after every place in line.
   */
  acquireAll(requests: readonly PermitRequest[], waiter?: Waiter): Promise<AcquireAllResult>;
  /** True when the backing store answers. Never rejects. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface Permit {
  readonly id: string;
  /** Extends the lease to `leaseMs` from now (default: the lease given at acquire). False if already lost. */
  renew(leaseMs?: number): Promise<boolean>;
  /** Frees the slot. Safe to call more than once; never rejects (an unreleased lease expires anyway). */
  release(): Promise<void>;
}

/**
 * Thrown when the limits store cannot answer (Redis down, restarting, too slow). The
 * gateway turns it into 503 service_unavailable: without the store it cannot know
 * whether a request is within its limits.
 */
export class LimiterUnavailableError extends Error {
  override readonly name = "LimiterUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isLimiterUnavailable(err: unknown): err is LimiterUnavailableError {
  return err instanceof LimiterUnavailableError;
}

/**
 * Release interval assumed for a cap when the caller gives none (PermitRequest's
 * releaseEveryMs): a refused permit's Retry-After is this × the releases it waits for.
 * When a slot frees depends on how long the holders' requests run, which only the caller
 * can estimate (the gateway does, from holding times); one second is the smallest
 * whole-second Retry-After that is not "retry at once".
 */
export const DEFAULT_PERMIT_RETRY_AFTER_MS = 1000;

/** record() keeps at most this many newest events per key, so a flood cannot grow memory without bound. */
export const DEFAULT_MAX_LOG_ENTRIES = 10_000;

/** Programming errors (not expected failures): limits and durations must be positive integers. */
export function checkPositiveInt(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
}
