// Capturing a hold while the database may be dropping connections or failing over.
// The dangerous case is a capture whose COMMIT went through but whose reply was lost
// with the connection: answering an error then would leave a charge without a
// delivered image. A capture is idempotent per request ID (a captured hold answers
// with its first capture's numbers, settle.ts), so asking again tells us what
// happened: if the charge stands the image in hand is delivered; if it never happened
// it happens now.
//
// The rule (docs/RELIABILITY.md "Money windows"): a store outage is asked again, with
// growing waits, for as long as the request's own deadline allows (a Postgres failover
// takes 10–30 s; the deadline is 140 s). If the deadline comes with the outcome still
// unknown, the outcome says so, and the gateway delivers the image (the work is done)
// and hands the hold to the reconciler (reconciler.ts), which captures it once the
// store is back (src/gateway/capture.ts decides what each outcome means for the
// answer). A refusal by the ledger (the hold had already been released or is gone) is
// a value and final: nothing was charged. Any other error is final too: the capture
// did not run.
import type { Failure } from "../http/api-error.ts";
import { isStoreUnavailable } from "../http/store-unavailable.ts";

export interface CaptureRetry {
  /** When the request's deadline passes: no wait is started that would end after it. */
  deadlineAt: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

/** First wait after a store error; doubled each time up to CAPTURE_MAX_WAIT_MS. */
export const CAPTURE_FIRST_WAIT_MS = 500;
export const CAPTURE_MAX_WAIT_MS = 2_000;

export type CaptureOutcome<C> =
  /** Charged (now or by an earlier try whose reply was lost). */
  | { kind: "charged"; charge: C }
  /** The ledger refused: not charged, and the hold is no longer open. */
  | { kind: "refused"; refusal: Failure }
  /** The capture failed with an error that is not an outage: it did not run, nothing was charged. */
  | { kind: "failed"; error: unknown }
  /** The store stayed away until the deadline: `amountKrw` may or may not have been charged. */
  | { kind: "unknown"; amountKrw: number; lastError: unknown };

/** Runs `attempt` (one capture of `amountKrw`) until its outcome is known or the deadline comes. */
export async function captureUntilKnown<C>(
  attempt: () => Promise<({ ok: true } & C) | Failure>,
  amountKrw: number,
  o: CaptureRetry,
): Promise<CaptureOutcome<C>> {
  let waitMs = CAPTURE_FIRST_WAIT_MS;
  for (;;) {
    try {
      const r = await attempt();
      return r.ok ? { kind: "charged", charge: r } : { kind: "refused", refusal: r };
    } catch (err) {
      if (!isStoreUnavailable(err)) return { kind: "failed", error: err };
      if (o.now() + waitMs >= o.deadlineAt) return { kind: "unknown", amountKrw, lastError: err };
      await o.sleep(waitMs);
      waitMs = Math.min(waitMs * 2, CAPTURE_MAX_WAIT_MS);
    }
  }
}
