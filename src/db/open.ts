// Chooses the Db implementation: a real server when a URL is configured,
// otherwise the embedded PGlite in dataDir.
import type { Db, OpenDbOptions } from "./types.ts";
import { openPostgres } from "./postgres-db.ts";
import { openPglite } from "./pglite-db.ts";

export async function openDb(opts: OpenDbOptions): Promise<Db> {
  if (opts.databaseUrl) {
    const db = openPostgres(opts.databaseUrl, opts.max);
    await db.query("SELECT 1"); // fail at boot, not on the first request
    return db;
  }
  return openPglite(opts.dataDir);
}
