// Spending counters (table spend_counters, see migrations/0001_init.sql): the org's
// daily spend and the app's daily and monthly spend, each = open holds + captured
// amounts of holds reserved in that KST period. They are changed only by the money
// functions of migrations/0003, under the org row's lock; this reads them.
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
