// A fresh embedded data directory for a server process in about a second instead of
// running initdb in WASM (several seconds, far more on a busy machine): one migrated
// PGlite directory is kept in the temp dir, named by the migrations' checksums (an
// edited migration makes a new one), and each caller gets a copy of it. The process
// then opens it through DATA_DIR exactly as the embedded default does. (In-process
// harnesses need none of this: makeHarness starts from an in-memory template.)
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

/**
 * A DATA_DIR of the caller's own whose PGlite folder (DATA_DIR/pglite, where the
 * service keeps it) is already migrated; remove() deletes it.
 */
export async function freshDataDir(): Promise<{ dataDir: string; pgliteDir: string; remove: () => Promise<void> }> {
  const template = await templateDir();
  const dataDir = await mkdtemp(join(COPY_ROOT, "pixeldrop-money-"));
  const pgliteDir = join(dataDir, "pglite");
  await cp(template, pgliteDir, { recursive: true });
  return { dataDir, pgliteDir, remove: () => rm(dataDir, { recursive: true, force: true }) };
}
