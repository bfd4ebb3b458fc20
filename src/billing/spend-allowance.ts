// What a live key may still spend before a spending limit refuses it: the tightest of
// the org's daily limit and the app's daily and monthly limits (the ones that answer
// 429 daily_limit_reached / monthly_limit_reached), with when that limit resets. The
// gateway reports it as X-RateLimit-* on live-key answers (docs/DECISIONS.md).
import type { Db } from "../db/index.ts";
import { kstDay, kstMonth, nextKstMidnight, nextKstMonthStart } from "./kst.ts";
import { readSpend } from "./spend.ts";

export interface SpendAllowance {
  limitKrw: number;
  remainingKrw: number;
  /** Epoch ms when this limit's period ends. */
  resetAt: number;
}

export async function readSpendAllowance(db: Db, q: { orgId: string; appId: string; now: number }): Promise<SpendAllowance | undefined> {
  const rows = await db.query<{ org_day: string | number; app_day: string | number | null; app_month: string | number | null }>(
    `SELECT o.daily_limit_krw AS org_day, a.daily_limit_krw AS app_day, a.monthly_limit_krw AS app_month
       FROM apps a JOIN organizations o ON o.org_id = a.org_id
      WHERE a.app_id = $1 AND o.org_id = $2`,
    [q.appId, q.orgId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const spent = await readSpend(db, { orgId: q.orgId, appId: q.appId, kstDay: kstDay(q.now), kstMonth: kstMonth(q.now) });
  const day = nextKstMidnight(q.now);
  const candidates: SpendAllowance[] = [
    { limitKrw: Number(row.org_day), remainingKrw: Number(row.org_day) - spent.orgDayKrw, resetAt: day },
  ];
  if (row.app_day !== null) candidates.push({ limitKrw: Number(row.app_day), remainingKrw: Number(row.app_day) - spent.appDayKrw, resetAt: day });
  if (row.app_month !== null) {
    candidates.push({ limitKrw: Number(row.app_month), remainingKrw: Number(row.app_month) - spent.appMonthKrw, resetAt: nextKstMonthStart(q.now) });
  }
  // Least left wins; on a tie the limit that resets later binds longer.
  candidates.sort((a, b) => a.remainingKrw - b.remainingKrw || b.resetAt - a.resetAt);
  const tightest = candidates[0]!;
  return { ...tightest, remainingKrw: Math.max(0, tightest.remainingKrw) };
}
