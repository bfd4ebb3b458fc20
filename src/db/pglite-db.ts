// Db over PGlite, the embedded Postgres (WASM) used when no DATABASE_URL is given.
// PGlite has a single connection. Its own `transaction()` takes an internal mutex
// that every top-level `query()` also waits on, so statements from other callers
// queue behind an open transaction instead of slipping into it. That is what makes
// concurrent reserve/capture calls serialise correctly here.
import { mkdir } from "node:fs/promises";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { Db } from "./types.ts";
import { OID_INT8, OID_NUMERIC, OID_TIMESTAMPTZ, parseInt8, parseNumeric, parseTimestamptz } from "./values.ts";

/** The PGlite Db plus what only PGlite can do: copy its whole data directory. */
export interface PgliteDb extends Db {
  /** A tarball of the data directory; `openPglite(…, { loadDataDir })` starts from it. */
  dumpDataDir(): Promise<Blob>;
}

export interface PgliteOptions {
  /**
   * Start from a dumped data directory instead of running initdb. Much faster
   * (initdb in WASM takes seconds), which matters for tests that each want a fresh
   * migrated database.
   */
  loadDataDir?: Blob;
}

export async function openPglite(dataDir: string, opts: PgliteOptions = {}): Promise<PgliteDb> {
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) await mkdir(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir, {
    loadDataDir: opts.loadDataDir,
    // Postgres's default 128 MB of shared buffers is resident in PGlite's WASM heap from the
    // start; 16 MB holds this service's working set and keeps ~130 MiB out of every
    // process that embeds the database (measured: 251 → 119 MiB over a bare process).
    postgresqlconf: ["shared_buffers=16MB"],
    parsers: {
      [OID_INT8]: parseInt8,
      [OID_NUMERIC]: parseNumeric,
      [OID_TIMESTAMPTZ]: parseTimestamptz,
    },
  });
  await pg.exec("SET TimeZone = 'UTC'");
  return { ...wrap(pg, null), dumpDataDir: () => pg.dumpDataDir("none") };
}

function wrap(pg: PGlite, tx: Transaction | null): Db {
  const db: Db = {
    kind: "pglite",
    async query<T>(text: string, params: unknown[] = []): Promise<T[]> {
      const res = await (tx ?? pg).query<T>(text, params);
      return res.rows;
    },
    async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      if (tx) return fn(db);
      return pg.transaction((t) => fn(wrap(pg, t)));
    },
    async exec(script: string): Promise<void> {
      await (tx ?? pg).exec(script);
    },
    async close(): Promise<void> {
      if (!tx && !pg.closed) await pg.close();
    },
  };
  return db;
}
