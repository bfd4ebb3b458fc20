// Capturing a hold while the database may be dropping connections. The dangerous case
// is a capture whose COMMIT went through but whose reply was lost with the connection:
// answering 503 then would leave a charge without a delivered image. A capture is
// idempotent per request ID (a captured hold answers with its first capture's numbers,
// src/billing/settle.ts), so asking again tells us what happened: if the charge stands
// the image in hand is delivered; if it never happened it happens now. Only store
// outages are asked again; any other failure is final.
import { isStoreUnavailable } from "./store-errors.ts";

export interface Charge {
  chargedKrw: number;
  balanceKrw: number;
}

export interface CaptureRetry {
  /** Tries in all (the first included). */
  tries: number;
  /** Wait between tries: long enough for a restarting store to come back, short next to a request's seconds. */
  waitMs: number;
  sleep: (ms: number) => Promise<void>;
}

export const CAPTURE_TRIES = 3;
export const CAPTURE_RETRY_WAIT_MS = 500;

export async function captureSettled(
  capture: (requestId: string, amountKrw: number) => Promise<Charge>,
  requestId: string,
  amountKrw: number,
  o: CaptureRetry,
): Promise<Charge> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await capture(requestId, amountKrw);
    } catch (err) {
      if (!isStoreUnavailable(err) || attempt >= o.tries) throw err;
      await o.sleep(o.waitMs);
    }
  }
}
