// Apps: an organization's integrations, each with its own product switch, optional
// spending limits and (in src/keys) its own test and live key. The product starts
// disabled until review, as the spec says.
import type { Db } from "../db/index.ts";
import { isForeignKeyViolation } from "../db/errors.ts";
import { newId } from "../db/random-id.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { APP_DAILY_LIMIT_MAX_KRW, APP_MONTHLY_LIMIT_MAX_KRW, checkAppName, checkLimit } from "./validate.ts";

export interface AppView {
  appId: string;
  orgId: string;
  name: string;
  productEnabled: boolean;
  dailyLimitKrw: number | null;
  monthlyLimitKrw: number | null;
  createdAt: number;
  deletedAt: number | null;
}

export interface AppPatch {
  name?: string;
  productEnabled?: boolean;
  /** null removes the limit. */
  dailyLimitKrw?: number | null;
  monthlyLimitKrw?: number | null;
}

interface AppRow {
  app_id: string;
  org_id: string;
  name: string;
  product_enabled: boolean;
  daily_limit_krw: number | null;
  monthly_limit_krw: number | null;
  created_at: number;
  deleted_at: number | null;
}

const APP_COLUMNS = "app_id, org_id, name, product_enabled, daily_limit_krw, monthly_limit_krw, created_at, deleted_at";

function toApp(r: AppRow): AppView {
  return {
    appId: r.app_id,
    orgId: r.org_id,
    name: r.name,
    productEnabled: r.product_enabled,
    dailyLimitKrw: r.daily_limit_krw,
    monthlyLimitKrw: r.monthly_limit_krw,
    createdAt: r.created_at,
    deletedAt: r.deleted_at,
  };
}

export function createApps({ db, now }: { db: Db; now: () => number }) {
  async function createApp(
    orgId: string,
    opts: { name: string; productEnabled?: boolean },
  ): Promise<({ ok: true } & AppView) | Failure> {
    const bad = checkAppName(opts.name);
    if (bad) return fail("invalid_parameter", bad);
    try {
      const rows = await db.query<AppRow>(
        `INSERT INTO apps (app_id, org_id, name, product_enabled, created_at)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${APP_COLUMNS}`,
        [newId("app"), orgId, opts.name.trim(), opts.productEnabled ?? false, new Date(now())],
      );
      return { ok: true, ...toApp(rows[0]) };
    } catch (e) {
      if (isForeignKeyViolation(e)) return fail("not_found", "Organization not found");
      throw e;
    }
  }

  /** Also returns deleted apps (deletedAt set), for history pages. */
  async function getApp(appId: string): Promise<AppView | null> {
    const rows = await db.query<AppRow>(`SELECT ${APP_COLUMNS} FROM apps WHERE app_id = $1`, [appId]);
    return rows[0] ? toApp(rows[0]) : null;
  }

  async function listApps(orgId: string): Promise<AppView[]> {
    const rows = await db.query<AppRow>(
      `SELECT ${APP_COLUMNS} FROM apps WHERE org_id = $1 AND deleted_at IS NULL ORDER BY created_at, app_id`,
      [orgId],
    );
    return rows.map(toApp);
  }

  async function updateApp(appId: string, patch: AppPatch): Promise<({ ok: true } & AppView) | Failure> {
    const sets: string[] = [];
    const params: unknown[] = [appId];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (patch.name !== undefined) {
      const bad = checkAppName(patch.name);
      if (bad) return fail("invalid_parameter", bad);
      set("name", patch.name.trim());
    }
    if (patch.productEnabled !== undefined) set("product_enabled", patch.productEnabled);
    if (patch.dailyLimitKrw !== undefined) {
      const bad = patch.dailyLimitKrw === null ? null : checkLimit(patch.dailyLimitKrw, APP_DAILY_LIMIT_MAX_KRW, "App daily limit");
      if (bad) return fail("invalid_parameter", bad);
      set("daily_limit_krw", patch.dailyLimitKrw);
    }
    if (patch.monthlyLimitKrw !== undefined) {
      const bad =
        patch.monthlyLimitKrw === null
          ? null
          : checkLimit(patch.monthlyLimitKrw, APP_MONTHLY_LIMIT_MAX_KRW, "App monthly limit");
      if (bad) return fail("invalid_parameter", bad);
      set("monthly_limit_krw", patch.monthlyLimitKrw);
    }
    const sql =
      sets.length > 0
        ? `UPDATE apps SET ${sets.join(", ")} WHERE app_id = $1 AND deleted_at IS NULL RETURNING ${APP_COLUMNS}`
        : `SELECT ${APP_COLUMNS} FROM apps WHERE app_id = $1 AND deleted_at IS NULL`;
    const rows = await db.query<AppRow>(sql, params);
    return rows[0] ? { ok: true, ...toApp(rows[0]) } : fail("not_found", "App not found");
  }

  /** Soft delete: the app's keys stop working at once (lookup treats them as deleted). */
  async function removeApp(appId: string): Promise<{ ok: true } | Failure> {
    const rows = await db.query(
      "UPDATE apps SET deleted_at = COALESCE(deleted_at, $2) WHERE app_id = $1 RETURNING 1",
      [appId, new Date(now())],
    );
    return rows.length > 0 ? { ok: true } : fail("not_found", "App not found");
  }

  return { createApp, getApp, listApps, updateApp, removeApp };
}
