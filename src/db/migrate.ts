// Applies migrations/NNNN_name.sql in order, each exactly once, at start-up.
//
// Each file runs in its own transaction together with its row in
// schema_migrations, so a failing file leaves nothing half-applied. On Postgres
// several processes may start at once: every transaction first takes one
// transaction-scoped advisory lock, so they take turns and the later ones find the
// work already recorded. A checksum of each applied file is kept; if a file was
// edited after it was applied, start-up stops instead of running on a schema that
// differs from the source. The one exception is a comment-only edit, written down in
// EARLIER_CHECKSUMS_FILE beside the migrations: for each version named there, a
// database that recorded one of the listed checksums (the text before the edit) starts
// as if it had recorded the current one, while the file is the text the list names.
import { readdir, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Db } from "./types.ts";

/** Arbitrary constant naming "the migration lock" among advisory locks. */
const MIGRATION_LOCK_KEY = 7_305_114_001;

const FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;

/**
 * Per version: `now`, the sha-256 of the file as edited, and `before`, those of its
 * earlier texts, which differ from it only in SQL comments. The earlier ones are
 * accepted only while the file's text is still `now`, so a later change to a statement
 * is refused as any other edit is. Only comment-only edits may be listed: the schema a
 * database has must be the one the file describes.
 */
export const EARLIER_CHECKSUMS_FILE = "checksums-before-comment-edits.json";
const CHECKSUM = /^[0-9a-f]{64}$/;

export const DEFAULT_MIGRATIONS_DIR = new URL("../../migrations/", import.meta.url);

export interface MigrationFile {
  version: string; // "0001"
  name: string; // "0001_init.sql"
  sql: string;
  checksum: string; // sha-256 hex of the text
  /** Recorded checksums that match this file: its own, then those of comment-only earlier texts. */
  accepted: string[];
}

interface CommentEdit {
  now: string;
  before: string[];
}

export async function loadMigrations(dir: URL | string = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => FILE_PATTERN.test(n)).sort();
  const earlier = await loadEarlierChecksums(dir);
  const files: MigrationFile[] = [];
  for (const name of names) {
    const sql = await readFile(new URL(name, dirUrl(dir)), "utf8");
    const version = name.slice(0, 4);
    const checksum = await sha256Hex(sql);
    const edit = earlier.get(version);
    files.push({ version, name, sql, checksum, accepted: [checksum, ...(edit?.now === checksum ? edit.before : [])] });
  }
  const versions = new Set(files.map((f) => f.version));
  if (versions.size !== files.length) throw new Error("two migration files share a version number");
  for (const version of earlier.keys()) {
    if (!versions.has(version)) throw new Error(`${EARLIER_CHECKSUMS_FILE} names version ${version}, which has no migration file`);
  }
  return files;
}

/** The earlier checksums by version; none when the file is absent. */
async function loadEarlierChecksums(dir: URL | string): Promise<Map<string, CommentEdit>> {
  let text: string;
  try {
    text = await readFile(new URL(EARLIER_CHECKSUMS_FILE, dirUrl(dir)), "utf8");
  } catch (e) {
    if ((e as { code?: unknown }).code === "ENOENT") return new Map();
    throw e;
  }
  const parsed = JSON.parse(text) as { versions?: Record<string, unknown> };
  const out = new Map<string, CommentEdit>();
  const isChecksum = (s: unknown): s is string => typeof s === "string" && CHECKSUM.test(s);
  for (const [version, entry] of Object.entries(parsed.versions ?? {})) {
    const { now, before } = (entry ?? {}) as { now?: unknown; before?: unknown };
    if (!/^\d{4}$/.test(version) || !isChecksum(now) || !Array.isArray(before) || !before.every(isChecksum)) {
      throw new Error(`${EARLIER_CHECKSUMS_FILE}: version ${version} needs { "now": sha-256, "before": [sha-256, …] } in hex`);
    }
    out.set(version, { now, before });
  }
  return out;
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
        if (!file.accepted.includes(done[0].checksum)) {
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
