// Db over postgres.js: a connection pool, `sql.unsafe(text, params)` for
// parameterised statements, `sql.begin` for transactions.
import postgres from "postgres";
import type { Db } from "./types.ts";
import { OID_INT8, OID_NUMERIC, OID_TIMESTAMPTZ, parseInt8, parseNumeric, parseTimestamptz } from "./values.ts";

type Sql = postgres.Sql;
type TxSql = postgres.TransactionSql;

export function openPostgres(url: string, max = 10): Db {
  const sql = postgres(url, {
    max,
    // CREATE … IF NOT EXISTS and friends emit notices; they are not worth a console line.
    onnotice: () => {},
    // UTC sessions keep timestamptz text unambiguous for the parser below.
    connection: { TimeZone: "UTC", application_name: "pixeldrop" },
    transform: { undefined: null },
    types: {
      // Override the default string results with checked numbers / ms.
      pdInt8: { to: OID_INT8, from: [OID_INT8], serialize: (x: unknown) => String(x), parse: parseInt8 },
      pdNumeric: { to: OID_NUMERIC, from: [OID_NUMERIC], serialize: (x: unknown) => String(x), parse: parseNumeric },
      pdTimestamptz: {
        to: OID_TIMESTAMPTZ,
        from: [OID_TIMESTAMPTZ],
        serialize: (x: unknown) => (x instanceof Date ? x.toISOString() : String(x)),
        parse: parseTimestamptz,
      },
    },
  });
  return wrap(sql, null);
}

function wrap(sql: Sql, tx: TxSql | null): Db {
  const runner: Sql | TxSql = tx ?? sql;
  const db: Db = {
    kind: "postgres",
    async query<T>(text: string, params: unknown[] = []): Promise<T[]> {
      // The driver's parameter type is a union of what it can serialise; our callers
      // pass plain values (string, number, boolean, Date, null) which all qualify.
      const rows = await runner.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
      return [...rows] as T[];
    },
    async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (tx) return fn(db);
      // sql.begin resolves to the callback's value; its typing wraps it, hence the cast.
      return (await sql.begin((t) => fn(wrap(sql, t)))) as T;
    },
    async exec(script: string): Promise<void> {
      // The simple protocol is the one that accepts several statements at once.
      await runner.unsafe(script).simple();
    },
    async close(): Promise<void> {
      if (!tx) await sql.end({ timeout: 5 });
    },
  };
  return db;
}
