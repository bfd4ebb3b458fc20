// Reserving a hold before processing. One transaction, serialised per organization
// by locking its row, so concurrent requests of one org see each other's holds and
// counters and can never together spend more than the balance or a limit.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { kstDay, kstMonth, nextKstMidnight, nextKstMonthStart, secondsUntil } from "./kst.ts";
import { addSpend, readSpend, type SpendScope } from "./spend.ts";

export interface ReserveInput {
  requestId: string;
  orgId: string;
  appId: string;
  amountKrw: number;
}

interface OrgRow {
  balance_krw: number;
  held_krw: number;
  daily_limit_krw: number;
  refund_pending: boolean;
}

interface AppRow {
  org_id: string;
  daily_limit_krw: number | null;
  monthly_limit_krw: number | null;
}

interface HoldRow {
  org_id: string;
  app_id: string;
  amount_krw: number;
  state: "open" | "captured" | "released";
}

/**
 * Checks run in this order, first failure wins: refund in progress, balance
 * (402 before 429: topping up is the fix that always works), org daily limit, app
 * daily limit, app monthly limit.
 */
export async function reserveHold(
  tx: Db,
  now: number,
  holdTtlMs: number,
  input: ReserveInput,
): Promise<{ ok: true } | Failure> {
  const { requestId, orgId, appId, amountKrw } = input;
  if (!Number.isSafeInteger(amountKrw) || amountKrw <= 0) {
    throw new RangeError(`reserve amount must be a positive whole number of won, got ${amountKrw}`);
  }

  const orgs = await tx.query<OrgRow>(
    `SELECT balance_krw, held_krw, daily_limit_krw, refund_pending
       FROM organizations WHERE org_id = $1 FOR UPDATE`,
    [orgId],
  );
  const org = orgs[0];
  if (!org) return fail("not_found", "Organization not found");

  // A gateway resend carries the same request ID: the first hold stands, no second one.
  // Looked up after taking the org lock, so two copies of one request cannot both insert.
  const existing = await tx.query<HoldRow>(
    "SELECT org_id, app_id, amount_krw, state FROM holds WHERE request_id = $1",
    [requestId],
  );
  if (existing[0]) {
    const h = existing[0];
    if (h.org_id !== orgId || h.app_id !== appId || h.amount_krw !== amountKrw) {
      return fail("conflict", "This request ID already holds a different reservation");
    }
    // A released hold must not silently come back: the request already ended.
    if (h.state === "released") return fail("conflict", "This request's reservation was already released");
    return { ok: true };
  }

  if (org.refund_pending) return fail("refund_pending");
  if (org.balance_krw - org.held_krw < amountKrw) return fail("insufficient_credits");

  const apps = await tx.query<AppRow>(
    "SELECT org_id, daily_limit_krw, monthly_limit_krw FROM apps WHERE app_id = $1",
    [appId],
  );
  const app = apps[0];
  if (!app || app.org_id !== orgId) return fail("not_found", "App not found in this organization");

  const scope: SpendScope = { orgId, appId, kstDay: kstDay(now), kstMonth: kstMonth(now) };
  const spent = await readSpend(tx, scope);
  const untilMidnight = secondsUntil(now, nextKstMidnight(now));
  if (spent.orgDayKrw + amountKrw > org.daily_limit_krw) {
    return fail("daily_limit_reached", "Organization daily spending limit reached", untilMidnight);
  }
  if (app.daily_limit_krw !== null && spent.appDayKrw + amountKrw > app.daily_limit_krw) {
    return fail("daily_limit_reached", "App daily spending limit reached", untilMidnight);
  }
  if (app.monthly_limit_krw !== null && spent.appMonthKrw + amountKrw > app.monthly_limit_krw) {
    return fail(
      "monthly_limit_reached",
      "App monthly spending limit reached",
      secondsUntil(now, nextKstMonthStart(now)),
    );
  }

  await tx.query(
    `INSERT INTO holds (request_id, org_id, app_id, amount_krw, state, created_at, expires_at, kst_day, kst_month)
     VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8)`,
    [requestId, orgId, appId, amountKrw, new Date(now), new Date(now + holdTtlMs), scope.kstDay, scope.kstMonth],
  );
  await tx.query("UPDATE organizations SET held_krw = held_krw + $2 WHERE org_id = $1", [orgId, amountKrw]);
  await addSpend(tx, scope, amountKrw);
  return { ok: true };
}
