// Spending counters (table spend_counters, see migrations/0001_init.sql): the org's
// daily spend and the app's daily and monthly spend, each = open holds + captured
// amounts of holds reserved in that KST period. Callers must hold the org row's
// lock (SELECT … FOR UPDATE) so a check and the following change cannot interleave.
import type { Db } from "../db/index.ts";

/** The three counters one hold counts towards. */
export interface SpendScope {
  orgId: string;
  appId: string;
  kstDay: string; // YYYY-MM-DD
  kstMonth: string; // YYYY-MM
}

export interface SpendNow {
  orgDayKrw: number;
  appDayKrw: number;
  appMonthKrw: number;
}

export async function readSpend(tx: Db, s: SpendScope): Promise<SpendNow> {
  const rows = await tx.query<{ scope_id: string; period: string; krw: number }>(
    `SELECT scope_id, period, krw FROM spend_counters
      WHERE (scope_id = $1 AND period = $3) OR (scope_id = $2 AND period IN ($3, $4))`,
    [s.orgId, s.appId, s.kstDay, s.kstMonth],
  );
  const get = (scope: string, period: string) =>
    rows.find((r) => r.scope_id === scope && r.period === period)?.krw ?? 0;
  return {
    orgDayKrw: get(s.orgId, s.kstDay),
    appDayKrw: get(s.appId, s.kstDay),
    appMonthKrw: get(s.appId, s.kstMonth),
  };
}

export async function addSpend(tx: Db, s: SpendScope, krw: number): Promise<void> {
  if (krw <= 0) return;
  await tx.query(
    `INSERT INTO spend_counters (scope_id, period, krw)
     VALUES ($1, $3, $5), ($2, $3, $5), ($2, $4, $5)
     ON CONFLICT (scope_id, period) DO UPDATE SET krw = spend_counters.krw + EXCLUDED.krw`,
    [s.orgId, s.appId, s.kstDay, s.kstMonth, krw],
  );
}

/** Gives back part of what addSpend added (a release, or a capture below the hold). */
export async function subtractSpend(tx: Db, s: SpendScope, krw: number): Promise<void> {
  if (krw <= 0) return;
  // An UPDATE, not an upsert: the rows exist (the hold added to them), and a
  // negative candidate row would trip the krw >= 0 check before ON CONFLICT applies.
  await tx.query(
    `UPDATE spend_counters SET krw = krw - $5
      WHERE (scope_id = $1 AND period = $3) OR (scope_id = $2 AND period IN ($3, $4))`,
    [s.orgId, s.appId, s.kstDay, s.kstMonth, krw],
  );
}
