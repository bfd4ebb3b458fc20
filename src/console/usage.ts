// Per-app, per-day usage for the console chart, read from the request log. The
// billing module's usageByDay is per organization; the chart splits by app.
import { kstDay } from "../billing/index.ts";
import type { Db } from "../db/index.ts";

const DAY_MS = 86_400_000;

export interface AppDayUsage {
  day: string; // KST YYYY-MM-DD
  appId: string;
  calls: number;
  chargedKrw: number;
}

export function createUsage({ db, now }: { db: Db; now: () => number }) {
  /** The last `days` KST days including today (oldest first) and the rows that have calls. */
  async function byAppAndDay(orgId: string, days = 30): Promise<{ days: string[]; rows: AppDayUsage[] }> {
    const t = now();
    const list: string[] = [];
    for (let i = days - 1; i >= 0; i--) list.push(kstDay(t - i * DAY_MS));
    const rows = await db.query<{ kst_day: string; app_id: string; calls: number; charged: number | null }>(
      `SELECT kst_day, app_id, count(*) AS calls, sum(charged_krw) AS charged
         FROM request_log
        WHERE org_id = $1 AND app_id IS NOT NULL AND kst_day >= $2 AND kst_day <= $3
        GROUP BY kst_day, app_id
        ORDER BY kst_day, app_id`,
      [orgId, list[0], list[list.length - 1]],
    );
    return { days: list, rows: rows.map((r) => ({ day: r.kst_day, appId: r.app_id, calls: r.calls, chargedKrw: r.charged ?? 0 })) };
  }

  return { byAppAndDay };
}

export type Usage = ReturnType<typeof createUsage>;
