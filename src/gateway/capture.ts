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
// an error is never answered for a call that may have been charged. Any failure other
// than a store outage (the hold was refused) is final and known: nothing was charged.
import { isStoreUnavailable } from "./store-errors.ts";

export interface Charge {
  chargedKrw: number;
  balanceKrw: number;
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

export type CaptureOutcome = { known: true; charge: Charge } | { known: false; lastError: unknown };

export async function captureSettled(
  capture: (requestId: string, amountKrw: number) => Promise<Charge>,
  requestId: string,
  amountKrw: number,
  o: CaptureRetry,
): Promise<CaptureOutcome> {
  let waitMs = CAPTURE_FIRST_WAIT_MS;
  for (;;) {
    try {
      return { known: true, charge: await capture(requestId, amountKrw) };
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      if (o.now() + waitMs >= o.deadlineAt) return { known: false, lastError: err };
      await o.sleep(waitMs);
      waitMs = Math.min(waitMs * 2, CAPTURE_MAX_WAIT_MS);
    }
  }
}
