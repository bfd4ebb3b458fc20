// Reserving a hold before processing: one call of the pd_reserve_hold function
// (migrations/0003_money_functions.sql), which locks the org row, so concurrent
// requests of one org see each other's holds and counters and can never together
// spend more than the balance or a limit. One statement is one round trip and its
// own transaction; the checks are described in the migration and below.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { kstDay, kstMonth, nextKstMidnight, nextKstMonthStart, secondsUntil } from "./kst.ts";

export interface ReserveInput {
  requestId: string;
  orgId: string;
  appId: string;
  amountKrw: number;
}

/**
 * Checks run in this order, first failure wins: refund in progress, balance
 * (402 before 429: topping up is the fix that always works), org daily limit, app
 * daily limit, app monthly limit. A resend of the same request ID finds its hold and
 * adds nothing.
 */
export async function reserveHold(
  db: Db,
  now: number,
  holdTtlMs: number,
  input: ReserveInput,
): Promise<{ ok: true } | Failure> {
  const { requestId, orgId, appId, amountKrw } = input;
  if (!Number.isSafeInteger(amountKrw) || amountKrw <= 0) {
    throw new RangeError(`reserve amount must be a positive whole number of won, got ${amountKrw}`);
  }
  const rows = await db.query<{ outcome: string }>(
    "SELECT pd_reserve_hold($1, $2, $3, $4, $5, $6, $7, $8) AS outcome",
    [requestId, orgId, appId, amountKrw, new Date(now), new Date(now + holdTtlMs), kstDay(now), kstMonth(now)],
    // Prepared once per connection: every paid call runs it.
    { prepare: "pd_reserve" },
  );
  const outcome = rows[0]?.outcome;
  switch (outcome) {
    case "ok":
      return { ok: true };
    case "org_not_found":
      return fail("not_found", "Organization not found");
    case "hold_mismatch":
      return fail("conflict", "This request ID already holds a different reservation");
    case "hold_released":
      // A released hold must not silently come back: the request already ended.
      return fail("conflict", "This request's reservation was already released");
    case "refund_pending":
      return fail("refund_pending");
    case "insufficient_credits":
      return fail("insufficient_credits");
    case "app_not_found":
      return fail("not_found", "App not found in this organization");
    case "org_daily_limit":
      return fail("daily_limit_reached", "Organization daily spending limit reached", secondsUntil(now, nextKstMidnight(now)));
    case "app_daily_limit":
      return fail("daily_limit_reached", "App daily spending limit reached", secondsUntil(now, nextKstMidnight(now)));
    case "app_monthly_limit":
      return fail("monthly_limit_reached", "App monthly spending limit reached", secondsUntil(now, nextKstMonthStart(now)));
    default:
      throw new Error(`pd_reserve_hold answered ${JSON.stringify(outcome)}`);
  }
}
