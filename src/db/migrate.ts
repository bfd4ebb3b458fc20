// Applies migrations/NNNN_name.sql in order, each exactly once, at start-up.
//
// Each file runs in its own transaction together with its row in
// schema_migrations, so a failing file leaves nothing half-applied. On Postgres
// several processes may start at once: every transaction first takes one
// transaction-scoped advisory lock, so they take turns and the later ones find the
// work already recorded. A checksum of each applied file is kept; if a file was
// edited after it was applied, start-up stops instead of running on a schema that
// differs from the source.
import { readdir, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Db } from "./types.ts";

/** Arbitrary constant naming "the migration lock" among advisory locks. */
const MIGRATION_LOCK_KEY = 7_305_114_001;

const FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;

export const DEFAULT_MIGRATIONS_DIR = new URL("../../migrations/", import.meta.url);

export interface MigrationFile {
  version: string; // "0001"
  name: string; // "0001_init.sql"
  sql: string;
  checksum: string; // sha-256 hex of the text
}

export async function loadMigrations(dir: URL | string = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => FILE_PATTERN.test(n)).sort();
  const files: MigrationFile[] = [];
  for (const name of names) {
    const sql = await readFile(new URL(name, dirUrl(dir)), "utf8");
    files.push({ version: name.slice(0, 4), name, sql, checksum: await sha256Hex(sql) });
  }
  const versions = new Set(files.map((f) => f.version));
  if (versions.size !== files.length) throw new Error("two migration files share a version number");
  return files;
}

export interface MigrateResult {
  applied: string[]; // names applied by this call
  skipped: string[]; // names that were already applied
}

export async function migrate(db: Db, dir: URL | string = DEFAULT_MIGRATIONS_DIR): Promise<MigrateResult> {
  const files = await loadMigrations(dir);
  const result: MigrateResult = { applied: [], skipped: [] };
  for (const file of files) {
    const ran = await db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
      await tx.exec(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version text PRIMARY KEY,
           name text NOT NULL,
           checksum text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const done = await tx.query<{ checksum: string }>(
        "SELECT checksum FROM schema_migrations WHERE version = $1",
        [file.version],
      );
      if (done.length > 0) {
        if (done[0].checksum !== file.checksum) {
          throw new Error(`migration ${file.name} was changed after it was applied; add a new migration instead`);
        }
        return false;
      }
      await tx.exec(file.sql);
      await tx.query("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)", [
        file.version,
        file.name,
        file.checksum,
      ]);
      return true;
    });
    (ran ? result.applied : result.skipped).push(file.name);
  }
  return result;
}

function dirUrl(dir: URL | string): URL {
  if (dir instanceof URL) return dir.href.endsWith("/") ? dir : new URL(dir.href + "/");
  return pathToFileURL(resolve(dir) + "/");
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
