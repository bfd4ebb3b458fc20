// What a live key may still spend before a spending limit refuses it: the tightest of
// the org's daily limit and the app's daily and monthly limits (the ones that answer
// 429 daily_limit_reached / monthly_limit_reached), with when that limit resets. The
// gateway reports it as X-RateLimit-* on live-key answers (docs/DECISIONS.md).
import type { Db } from "../db/index.ts";
import { kstDay, kstMonth, nextKstMidnight, nextKstMonthStart } from "./kst.ts";
import { readSpend, type SpendNow } from "./spend.ts";
import type { RecentSpend } from "./recent-spend.ts";

export interface SpendAllowance {
  limitKrw: number;
  remainingKrw: number;
  /** Epoch ms when this limit's period ends. */
  resetAt: number;
}

/** KRW; null: the app has no limit of its own for that period. */
export interface SpendLimits {
  orgDailyKrw: number;
  appDailyKrw: number | null;
  appMonthlyKrw: number | null;
}

/**
 * The limits come from the caller (the gateway has them from the key's lookup of the
 * same request), so this is one statement: the three spending counters, or
 * none when `recent` holds them from the last second (recent-spend.ts).
 * After a capture the counters come with it (`spendAfter`, src/billing/settle.ts) and
 * spendAllowanceOf is used without this read.
 */
export async function readSpendAllowance(
  db: Db,
  q: { orgId: string; appId: string; now: number; limits: SpendLimits },
  recent?: RecentSpend,
): Promise<SpendAllowance> {
  let spent = recent?.get(q.orgId, q.appId, q.now);
  if (!spent) {
    const reading = recent?.reading();
    spent = await readSpend(db, { orgId: q.orgId, appId: q.appId, kstDay: kstDay(q.now), kstMonth: kstMonth(q.now) });
    if (reading !== undefined) recent!.remember(q.orgId, q.appId, spent, q.now, reading);
  }
  return spendAllowanceOf(spent, q.limits, q.now);
}

/** The tightest limit, given the counters of the KST day and month of `now`. */
export function spendAllowanceOf(spent: SpendNow, limits: SpendLimits, now: number): SpendAllowance {
  const day = nextKstMidnight(now);
  const { orgDailyKrw, appDailyKrw, appMonthlyKrw } = limits;
  const candidates: SpendAllowance[] = [{ limitKrw: orgDailyKrw, remainingKrw: orgDailyKrw - spent.orgDayKrw, resetAt: day }];
  if (appDailyKrw !== null) candidates.push({ limitKrw: appDailyKrw, remainingKrw: appDailyKrw - spent.appDayKrw, resetAt: day });
  if (appMonthlyKrw !== null) {
    candidates.push({ limitKrw: appMonthlyKrw, remainingKrw: appMonthlyKrw - spent.appMonthKrw, resetAt: nextKstMonthStart(now) });
  }
  // Least left wins; on a tie the limit that resets later binds longer.
  candidates.sort((a, b) => a.remainingKrw - b.remainingKrw || b.resetAt - a.resetAt);
  const tightest = candidates[0]!;
  return { ...tightest, remainingKrw: Math.max(0, tightest.remainingKrw) };
}
