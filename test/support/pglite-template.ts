// A fresh embedded database directory in about a second instead of running initdb
// in WASM (several seconds, far more on a busy machine) for every suite: one migrated
// PGlite data directory is kept in the temp dir, named by the migrations' checksums
// (an edited migration makes a new one), and each caller gets a copy of it. The
// service then opens it through DATA_DIR exactly as the embedded default does.
import { existsSync } from "node:fs";
import { cp, mkdtemp, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadMigrations, migrate, randomBase62 } from "../../src/db/index.ts";
import { openPglite } from "../../src/db/pglite-db.ts";

async function templateDir(): Promise<string> {
  const sums = (await loadMigrations()).map((m) => m.checksum.slice(0, 8)).join("");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(sums));
  const tag = [...new Uint8Array(digest)].slice(0, 8).map((b) => b.toString(16).padStart(2, "0")).join("");
  const dir = join(tmpdir(), `pixeldrop-pglite-dir-${tag}`);
  if (await stat(join(dir, "PG_VERSION")).catch(() => null)) return dir;
  // Built beside the final name and renamed into place, so a concurrent reader never
  // sees half a directory; if another process won the race, its copy is as good.
  const partial = `${dir}.${randomBase62(6)}.partial`;
  const db = await openPglite(partial);
  await migrate(db);
  await db.close();
  await rename(partial, dir).catch(async () => rm(partial, { recursive: true, force: true }));
  return dir;
}

/** Memory-backed when the machine has /dev/shm: PGlite syncs each commit to its files. */
const COPY_ROOT = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

/** A migrated PGlite data directory of the caller's own; remove() deletes it. */
export async function freshPgliteDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const template = await templateDir();
  const dir = await mkdtemp(join(COPY_ROOT, "pixeldrop-money-"));
  await cp(template, dir, { recursive: true });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
