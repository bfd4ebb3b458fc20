// Several concurrency permits for one request, all or none: a live call needs its org's
// slot (2) and a slot under the global cap, a test call its key's slot (1), the test
// share and the global cap. Limiter.acquireAll takes them in the order given, as one
// atomic step of the store (one Redis script, or one synchronous pass in process), so
// the narrower cap (listed first) refuses before a global slot is held for nothing and
// a refused request leaves nothing behind. The answer names the first permit refused.
import type { Permit } from "./limiter.ts";

export interface PermitRequest {
  key: string;
  max: number;
  leaseMs: number;
}

/** Permits taken together, given back together (one store round trip). */
export interface PermitSet {
  readonly permits: readonly Permit[];
  /** Frees every permit of the set still held. Safe to call more than once; never rejects. */
  release(): Promise<void>;
}

export type AcquireAllResult =
  | ({ ok: true } & PermitSet)
  | { ok: false; failedKey: string; failedIndex: number; retryAfterMs: number };
