// Ending a hold: capture (charge) or release (give the reservation back), each one
// call of a function of migrations/0003_money_functions.sql. Both lock the org row
// first and the hold row second, the same order reserve uses, so concurrent calls on
// one org queue up instead of deadlocking. The state check under the hold lock is
// what makes each hold end exactly once.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";

export type CaptureResult = { ok: true; chargedKrw: number; balanceKrw: number } | Failure;
export type ReleaseResult = { ok: true; released: boolean } | Failure;

/**
 * Charges min(amountKrw, reserved). A second capture of the same request charges
 * nothing more and answers with the first capture's numbers.
 */
export async function captureHold(db: Db, now: number, requestId: string, amountKrw: number): Promise<CaptureResult> {
  if (!Number.isSafeInteger(amountKrw) || amountKrw <= 0) {
    throw new RangeError(`capture amount must be a positive whole number of won, got ${amountKrw}`);
  }
  const rows = await db.query<{ outcome: string; charged: number | null; balance: number | null }>(
    "SELECT outcome, charged, balance FROM pd_capture_hold($1, $2, $3)",
    [requestId, amountKrw, new Date(now)],
  );
  const r = rows[0];
  switch (r?.outcome) {
    case "ok":
    case "again":
      return { ok: true, chargedKrw: r.charged!, balanceKrw: r.balance! };
    case "not_found":
      return fail("not_found", "No reservation for this request");
    case "released":
      return fail("conflict", "This request's reservation was already released");
    default:
      throw new Error(`pd_capture_hold answered ${JSON.stringify(r)}`);
  }
}

/**
 * Gives an open hold back. Releasing twice, or a request that never got a hold, is
 * fine (released: false); releasing a captured hold is refused, a charge stands.
 * With `onlyIfExpiredAt`, only a hold whose expiry has passed is released (sweeper).
 */
export async function releaseHold(
  db: Db,
  now: number,
  requestId: string,
  onlyIfExpiredAt?: number,
): Promise<ReleaseResult> {
  const rows = await db.query<{ outcome: string }>("SELECT pd_release_hold($1, $2, $3) AS outcome", [
    requestId,
    new Date(now),
    onlyIfExpiredAt === undefined ? null : new Date(onlyIfExpiredAt),
  ]);
  switch (rows[0]?.outcome) {
    case "released":
      return { ok: true, released: true };
    case "none":
      return { ok: true, released: false };
    case "captured":
      return fail("conflict", "This request was already charged");
    default:
      throw new Error(`pd_release_hold answered ${JSON.stringify(rows[0])}`);
  }
}
