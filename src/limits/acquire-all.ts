// Several concurrency permits for one request, all or none: a live call needs its org's
// slot (2) and a slot under the global cap, a test call its key's slot (1), the test
// share and the global cap. Limiter.acquireAll takes them in the order given, as one
// atomic step of the store (one Redis script, or one synchronous pass in process), so
// the narrower cap (listed first) refuses before a global slot is held for nothing and
// a refused request leaves nothing behind. The answer names the first permit refused.
//
// A caller refused at a full cap takes a place in that cap's line (waiting-line.ts): the
// next freed slot is held for the first place in line, so a caller that comes back when
// its Retry-After says gets it ahead of callers that did not wait. The place is part of
// the same step (no extra round trip) and lapses when its Retry-After plus a grace has
// passed without the caller coming back.
import type { Permit } from "./limiter.ts";
import type { CallClass } from "./test-share.ts";

export interface PermitRequest {
  key: string;
  max: number;
  leaseMs: number;
  /**
   * Expected ms between two releases of this cap's slots while it is full (holding
   * time ÷ max): a refused caller's Retry-After is this times the releases it must wait
   * for. Default: the limiter's permitRetryAfterMs.
   */
  releaseEveryMs?: number;
}

/** Who is asking, so a refusal can keep a place in line for it (the gateway: the API key). */
export interface Waiter {
  /** Same id, same caller: one place per cap, however many calls it sends. */
  id: string;
  /** "live" places go first; a "test" place goes before them once it has waited promoteAfterMs. */
  lane: CallClass;
  promoteAfterMs: number;
  /** Longest Retry-After to announce (the request deadline); default unbounded. */
  maxRetryAfterMs?: number;
}

/** Permits taken together, given back together (one store round trip). */
export interface PermitSet {
  readonly permits: readonly Permit[];
  /** Frees every permit of the set still held. Safe to call more than once; never rejects. */
  release(): Promise<void>;
}

export type AcquireAllResult =
  | ({ ok: true } & PermitSet)
  | {
      ok: false;
      failedKey: string;
      failedIndex: number;
      /**
       * Whole seconds in ms, at least 1 s: when the caller's turn in the line of the cap
       * that refused it is expected (the releases ahead of it × releaseEveryMs). A waiter
       * that returns then finds the slot held for it; its place lasts this long plus
       * HANDOVER_GRACE_MS.
       */
      retryAfterMs: number;
    };
