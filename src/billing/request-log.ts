// The request log: one row per request that reached the gateway, for support (find
// a request by the ID a customer quotes) and for the console's usage pages. Writing
// the same request ID again overwrites the row, so the final state wins.
import type { Db } from "../db/index.ts";
import { createGroupWriter } from "./group-writer.ts";
import { isStoreUnavailable } from "../http/store-unavailable.ts";
import { kstDay } from "./kst.ts";

export interface RequestLogRow {
  requestId: string;
  receivedAt: number; // ms epoch
  orgId?: string | null;
  appId?: string | null;
  keyId?: string | null;
  keyKind?: "test" | "live" | null;
  tier?: "preview" | "full" | null;
  status: number;
  errorCode?: string | null;
  chargedKrw: number;
  processingMs?: number | null;
  attempts: number;
  ip?: string | null;
  width?: number | null;
  height?: number | null;
}

export interface ListRequestsQuery {
  orgId: string;
  from?: number; // inclusive, ms
  to?: number; // exclusive, ms
  appId?: string;
  /** A request ID (or its start) or an error code. */
  query?: string;
  limit: number;
}

export interface DayUsage {
  day: string; // KST YYYY-MM-DD
  calls: number;
  errors: number; // status >= 400
  chargedKrw: number;
}

interface Stored {
  request_id: string;
  received_at: number;
  org_id: string | null;
  app_id: string | null;
  key_id: string | null;
  key_kind: "test" | "live" | null;
  tier: "preview" | "full" | null;
  status: number;
  error_code: string | null;
  charged_krw: number;
  processing_ms: number | null;
  attempts: number;
  ip: string | null;
  width: number | null;
  height: number | null;
}

const COLUMNS =
  "request_id, received_at, org_id, app_id, key_id, key_kind, tier, status, error_code, charged_krw, processing_ms, attempts, ip, width, height";
const MAX_LIST = 500;
const MAX_DAYS = 366;
const DAY_MS = 86_400_000;

// The final state wins: a later write of the same request ID overwrites the row
// (received_at and kst_day stay those of the first write).
const UPSERT_TAIL = `ON CONFLICT (request_id) DO UPDATE SET
         org_id = EXCLUDED.org_id, app_id = EXCLUDED.app_id, key_id = EXCLUDED.key_id,
         key_kind = EXCLUDED.key_kind, tier = EXCLUDED.tier, status = EXCLUDED.status,
         error_code = EXCLUDED.error_code, charged_krw = EXCLUDED.charged_krw,
         processing_ms = EXCLUDED.processing_ms, attempts = EXCLUDED.attempts,
         ip = EXCLUDED.ip, width = EXCLUDED.width, height = EXCLUDED.height`;
const PARAMS_PER_ROW = 16;
/** 16 parameters a row: 200 rows stay far below Postgres's 65,535 parameters per statement. */
const MAX_ROWS_PER_WRITE = 200;

function rowParams(row: RequestLogRow): unknown[] {
  return [
    row.requestId,
    new Date(row.receivedAt),
    row.orgId ?? null,
    row.appId ?? null,
    row.keyId ?? null,
    row.keyKind ?? null,
    row.tier ?? null,
    row.status,
    row.errorCode ?? null,
    row.chargedKrw,
    row.processingMs ?? null,
    row.attempts,
    row.ip ?? null,
    row.width ?? null,
    row.height ?? null,
    kstDay(row.receivedAt),
  ];
}

function upsertSql(rows: number): string {
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const base = r * PARAMS_PER_ROW;
    tuples.push(`(${Array.from({ length: PARAMS_PER_ROW }, (_, i) => `$${base + i + 1}`).join(", ")})`);
  }
  return `INSERT INTO request_log (${COLUMNS}, kst_day) VALUES ${tuples.join(", ")} ${UPSERT_TAIL}`;
}

const UPSERT_ONE = upsertSql(1);

/**
 * The upsert of one row as a part of another statement (a charged call's row rides in its
 * capture's statement, settle.ts): a data-modifying CTE body that inserts the row only
 * when `when` (an SQL condition on `source`) holds, with charged_krw taken from
 * `chargedSql` instead of the row. Its parameters are numbered from `$firstParam`.
 */
/** charged_krw's place in COLUMNS, and so in rowParams. */
const CHARGED = COLUMNS.split(", ").indexOf("charged_krw");

export function rowUpsertFrom(
  row: RequestLogRow,
  o: { source: string; when: string; chargedSql: string; firstParam: number },
): { sql: string; params: unknown[] } {
  const params = rowParams(row).filter((_, i) => i !== CHARGED);
  const values = params.map((_, i) => `$${o.firstParam + i}`);
  values.splice(CHARGED, 0, o.chargedSql);
  return {
    sql: `INSERT INTO request_log (${COLUMNS}, kst_day) SELECT ${values.join(", ")} FROM ${o.source} WHERE ${o.when} ${UPSERT_TAIL}`,
    params,
  };
}

export function createRequestLog({ db, now }: { db: Db; now: () => number }) {
  // Every answered request writes a row before its answer goes out; concurrent ones
  // share a statement (group-writer.ts).
  const write = createGroupWriter<RequestLogRow>({
    maxBatch: MAX_ROWS_PER_WRITE,
    isOutage: isStoreUnavailable,
    writeOne: async (row) => {
      await db.query(UPSERT_ONE, rowParams(row));
    },
    writeMany: async (rows) => {
      // One statement may not change a row twice: of several writes of one request
      // ID in a group, the last (the final state) is kept, with the first one's time.
      const last = new Map<string, RequestLogRow>();
      for (const r of rows) {
        const earlier = last.get(r.requestId);
        last.set(r.requestId, earlier ? { ...r, receivedAt: earlier.receivedAt } : r);
      }
      const unique = [...last.values()];
      await db.query(upsertSql(unique.length), unique.flatMap(rowParams));
    },
  });

  function logRequest(row: RequestLogRow): Promise<void> {
    return write(row);
  }

  async function getRequest(requestId: string): Promise<RequestLogRow | null> {
    const rows = await db.query<Stored>(`SELECT ${COLUMNS} FROM request_log WHERE request_id = $1`, [requestId]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Newest first. */
  async function listRequests(q: ListRequestsQuery): Promise<RequestLogRow[]> {
    const where = ["org_id = $1"];
    const params: unknown[] = [q.orgId];
    const add = (clause: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(clause(`$${params.length}`));
    };
    if (q.from !== undefined) add((p) => `received_at >= ${p}`, new Date(q.from));
    if (q.to !== undefined) add((p) => `received_at < ${p}`, new Date(q.to));
    if (q.appId !== undefined) add((p) => `app_id = ${p}`, q.appId);
    const text = q.query?.trim();
    if (text) {
      // A request ID the customer quoted (possibly cut short) or an error code. LIKE
      // wildcards in the text are escaped so they match literally.
      params.push(text.replace(/[\\%_]/g, "\\$&"), text);
      where.push(`(request_id LIKE $${params.length - 1} || '%' OR error_code = $${params.length})`);
    }
    const limit = Math.max(1, Math.min(MAX_LIST, Math.floor(q.limit)));
    const rows = await db.query<Stored>(
      `SELECT ${COLUMNS} FROM request_log WHERE ${where.join(" AND ")} ORDER BY received_at DESC, request_id DESC LIMIT ${limit}`,
      params,
    );
    return rows.map(toRow);
  }

  /** Per KST day for the last `days` days including today, oldest first; days without calls are included as zeros. */
  async function usageByDay(q: { orgId: string; days: number }): Promise<DayUsage[]> {
    const days = Math.max(1, Math.min(MAX_DAYS, Math.floor(q.days)));
    const t = now();
    const wanted: string[] = [];
    for (let i = days - 1; i >= 0; i--) wanted.push(kstDay(t - i * DAY_MS));
    const rows = await db.query<{ kst_day: string; calls: number; errors: number; charged: number | null }>(
      `SELECT kst_day, count(*) AS calls, count(*) FILTER (WHERE status >= 400) AS errors, sum(charged_krw) AS charged
         FROM request_log WHERE org_id = $1 AND kst_day >= $2 AND kst_day <= $3
        GROUP BY kst_day`,
      [q.orgId, wanted[0], wanted[wanted.length - 1]],
    );
    const byDay = new Map(rows.map((r) => [r.kst_day, r]));
    return wanted.map((day) => {
      const r = byDay.get(day);
      return { day, calls: r?.calls ?? 0, errors: r?.errors ?? 0, chargedKrw: r?.charged ?? 0 };
    });
  }

  return { logRequest, getRequest, listRequests, usageByDay };
}

function toRow(r: Stored): RequestLogRow {
  return {
    requestId: r.request_id,
    receivedAt: r.received_at,
    orgId: r.org_id,
    appId: r.app_id,
    keyId: r.key_id,
    keyKind: r.key_kind,
    tier: r.tier,
    status: r.status,
    errorCode: r.error_code,
    chargedKrw: r.charged_krw,
    processingMs: r.processing_ms,
    attempts: r.attempts,
    ip: r.ip,
    width: r.width,
    height: r.height,
  };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
