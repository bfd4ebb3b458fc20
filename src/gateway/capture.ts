// Capturing a hold while the database may be dropping connections or failing over.
// The dangerous case is a capture whose COMMIT went through but whose reply was lost
// with the connection: answering an error then would leave a charge without a
// delivered image. A capture is idempotent per request ID (a captured hold answers
// with its first capture's numbers, src/billing/settle.ts), so asking again tells us
// what happened: if the charge stands the image in hand is delivered; if it never
// happened it happens now.
//
// The rule (docs/RELIABILITY.md "Money windows"): a store outage is asked again, with
// growing waits, for as long as the request's own deadline allows (a Postgres failover
// takes 10–30 s; the deadline is 140 s). If the deadline comes with the outcome still
// unknown, the caller delivers the image (the work is done) and hands the hold to the
// reconciler (src/billing/reconciler.ts), which captures it once the store is back:
// an error is never answered for a call that may have been charged. A refusal by the
// ledger (the hold had already been released or is gone) is a value and final: nothing
// was charged. Any other error is final too: the capture did not run.
import type { Failure } from "../http/api-error.ts";
import { isStoreUnavailable } from "../http/store-unavailable.ts";
import type { SpendAllowance } from "../billing/spend-allowance.ts";

export interface Charge {
  chargedKrw: number;
  balanceKrw: number;
  /** What the key may still spend right after this capture (X-RateLimit-*), when the ledger said. */
  allowance?: SpendAllowance;
  /** The call's request-log row was written by the capture's own statement. */
  logged?: boolean;
}

export interface CaptureRetry {
  /** When the request's deadline passes: no wait is started that would end after it. */
  deadlineAt: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

/** First wait after a store error; doubled each time up to CAPTURE_MAX_WAIT_MS. */
export const CAPTURE_FIRST_WAIT_MS = 500;
export const CAPTURE_MAX_WAIT_MS = 2_000;

export type CaptureOutcome =
  /** Charged (now or by an earlier try whose reply was lost). */
  | { kind: "charged"; charge: Charge }
  /** The ledger refused: not charged, and the hold is no longer open. */
  | { kind: "refused"; refusal: Failure }
  /** The capture failed with an error that is not an outage: it did not run, nothing was charged. */
  | { kind: "failed"; error: unknown }
  /** The store stayed away until the deadline: it may or may not have been charged. */
  | { kind: "unknown"; lastError: unknown };

export async function captureSettled(
  capture: (requestId: string, amountKrw: number) => Promise<({ ok: true } & Charge) | Failure>,
  requestId: string,
  amountKrw: number,
  o: CaptureRetry,
): Promise<CaptureOutcome> {
  let waitMs = CAPTURE_FIRST_WAIT_MS;
  for (;;) {
    try {
      const r = await capture(requestId, amountKrw);
      return r.ok
        ? { kind: "charged", charge: { chargedKrw: r.chargedKrw, balanceKrw: r.balanceKrw, allowance: r.allowance, logged: r.logged } }
        : { kind: "refused", refusal: r };
    } catch (err) {
      if (!isStoreUnavailable(err)) return { kind: "failed", error: err };
      if (o.now() + waitMs >= o.deadlineAt) return { kind: "unknown", lastError: err };
      await o.sleep(waitMs);
      waitMs = Math.min(waitMs * 2, CAPTURE_MAX_WAIT_MS);
    }
  }
}
