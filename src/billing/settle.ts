// Ending a hold: capture (charge) or release (give the reservation back), each one
// call of a function of migrations/0003_money_functions.sql. Both lock the org row
// first and the hold row second, the same order reserve uses, so concurrent calls on
// one org queue up instead of deadlocking. The state check under the hold lock is
// what makes each hold end exactly once.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { kstDay, kstMonth } from "./kst.ts";
import type { SpendNow } from "./spend.ts";
import { rowUpsertFrom, type RequestLogRow } from "./request-log.ts";

/** The spending counters right after a capture, for the KST day and month of `at`. */
export interface SpendAfter extends SpendNow {
  /** Epoch ms of the capture: the periods above are this moment's. */
  at: number;
}

export type CaptureResult = { ok: true; chargedKrw: number; balanceKrw: number; spendAfter: SpendAfter; logged: boolean } | Failure;
export type ReleaseResult = { ok: true; released: boolean } | Failure;

/**
 * Charges min(amountKrw, reserved). A second capture of the same request charges
 * nothing more and answers with the first capture's numbers. Either way the answer
 * carries the spending counters as they are now (migrations/0006): X-RateLimit-* needs
 * them, and reading them in the capture's statement saves one of their own. With
 * `logRow`, the request-log row is written by the same statement when a charge stands
 * (its charged_krw is the charge's).
 */
export async function captureHold(db: Db, now: number, requestId: string, amountKrw: number, logRow?: RequestLogRow): Promise<CaptureResult> {
  if (!Number.isSafeInteger(amountKrw) || amountKrw <= 0) {
    throw new RangeError(`capture amount must be a positive whole number of won, got ${amountKrw}`);
  }
  const params: unknown[] = [requestId, amountKrw, new Date(now), kstDay(now), kstMonth(now)];
  let sql = `SELECT outcome, charged, balance, org_day, app_day, app_month FROM pd_capture_hold_with_spend($1, $2, $3, $4, $5)`;
  if (logRow) {
    // The call's request-log row in the same statement, with what was charged: one
    // round trip fewer per paid call, and the row stands or falls with the
    // charge. MATERIALIZED: the capture runs once, whoever reads its answer.
    const row = rowUpsertFrom(logRow, { source: "c", when: "c.outcome IN ('ok', 'again')", chargedSql: "c.charged", firstParam: params.length + 1 });
    params.push(...row.params);
    sql = `WITH c AS MATERIALIZED (${sql}), logged AS (${row.sql}) SELECT * FROM c`;
  }
  // Prepared once per connection (one name per text): every paid call runs it, and the
  // text with the log row's upsert is the longest statement of the call to parse and plan.
  const rows = await db.query<{
    outcome: string;
    charged: number | null;
    balance: number | null;
    org_day: number | null;
    app_day: number | null;
    app_month: number | null;
  }>(sql, params, { prepare: logRow ? "pd_capture_logged" : "pd_capture" });
  const r = rows[0];
  switch (r?.outcome) {
    case "ok":
    case "again":
      return {
        ok: true,
        chargedKrw: r.charged!,
        balanceKrw: r.balance!,
        spendAfter: { at: now, orgDayKrw: r.org_day!, appDayKrw: r.app_day!, appMonthKrw: r.app_month! },
        logged: logRow !== undefined,
      };
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
