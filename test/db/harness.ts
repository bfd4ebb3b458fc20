// Runs the same test bodies against in-memory PGlite (always) and a real Postgres
// (when DATABASE_URL is set). Each file gets its own freshly migrated database: a
// new PGlite instance, or on Postgres a throwaway database created next to the one
// in DATABASE_URL and dropped afterwards, so schema edits and parallel runs of other
// suites never meet.
import { after, before, describe } from "node:test";
import { readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb, migrate, loadMigrations, randomBase62, type Db } from "../../src/db/index.ts";
import { openPglite, type PgliteDb } from "../../src/db/pglite-db.ts";

export interface Backend {
  name: "pglite" | "postgres";
  /** A reason to skip, or false. */
  skip: string | false;
}

export const BACKENDS: Backend[] = [
  { name: "pglite", skip: false },
  { name: "postgres", skip: process.env.DATABASE_URL ? false : "DATABASE_URL is not set" },
];

/** DATABASE_URL with its database name replaced. */
export function urlForDatabase(name: string): string {
  const u = new URL(process.env.DATABASE_URL!);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A new empty database on the server in DATABASE_URL; call the returned drop when done. */
export async function createScratchDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `pd_test_${randomBase62(10).toLowerCase()}`;
  const admin = await openDb({ databaseUrl: process.env.DATABASE_URL!, dataDir: "", max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.close();
  return {
    url: urlForDatabase(name),
    async drop() {
      const a = await openDb({ databaseUrl: process.env.DATABASE_URL!, dataDir: "", max: 1 });
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.close();
    },
  };
}

/**
 * The template's bytes as the Blob PGlite asks for. A real Blob would cost more than the
 * rest of the start: Node 20 copies the 41 MB tar into it (~0.2 s) and reads it back in
 * chunks (0.5-1.4 s here; Deno 0.6 s in all), for each of the suite's many PGlite
 * instances. PGlite reads a data-directory tarball with `arrayBuffer()` alone (and `type`,
 * to spot a gzipped one), so this hands it the file's own buffer. Were a later PGlite to
 * read it otherwise, every embedded test would fail at once, not pass wrongly.
 */
function tarballOf(bytes: Buffer): Blob {
  const exact = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const buffer = exact ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return { type: "application/x-tar", size: bytes.byteLength, arrayBuffer: async () => buffer } as unknown as Blob;
}

/**
 * Each template read once per process: the files of a shared test process open many
 * instances, and PGlite copies every file out of the tarball (it never writes into it).
 */
const templates = new Map<string, Promise<Buffer | null>>();
function readTemplate(path: string): Promise<Buffer | null> {
  let bytes = templates.get(path);
  if (!bytes) {
    bytes = readFile(path).catch(() => null);
    templates.set(path, bytes);
    // Not there yet: this call makes it, and the next one reads it.
    void bytes.then((b) => b ?? templates.delete(path));
  }
  return bytes;
}

/**
 * A fresh in-memory PGlite, migrated unless `blank`. initdb in WASM takes several
 * seconds, so the first call dumps the data directory to the temp dir (named by the
 * migrations' checksums, so an edited migration makes a new one) and later calls, in
 * this process or the next test file, start from that copy.
 */
export async function openMigratedPglite(opts: { blank?: boolean } = {}): Promise<PgliteDb> {
  const sums = opts.blank ? "blank" : (await loadMigrations()).map((m) => m.checksum.slice(0, 8)).join("");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(sums));
  const tag = [...new Uint8Array(digest)].slice(0, 8).map((b) => b.toString(16).padStart(2, "0")).join("");
  const path = join(tmpdir(), `pixeldrop-pglite-template-${tag}.tar`);
  const cached = await readTemplate(path);
  if (cached) {
    const db = await openPglite("memory://", { loadDataDir: tarballOf(cached) });
    if (!opts.blank) await migrate(db); // a no-op unless the cache is stale; then it fails loudly
    return db;
  }
  const db = await openPglite("memory://");
  if (!opts.blank) await migrate(db);
  const tar = new Uint8Array(await (await db.dumpDataDir()).arrayBuffer());
  // Write then rename, so a concurrent reader never sees half a file.
  const partial = `${path}.${randomBase62(6)}.partial`;
  await writeFile(partial, tar);
  await rename(partial, path);
  return db;
}

export async function openFresh(backend: Backend["name"], max = 10): Promise<{ db: Db; dispose: () => Promise<void> }> {
  if (backend === "pglite") {
    const db = await openMigratedPglite();
    return { db, dispose: () => db.close() };
  }
  const scratch = await createScratchDatabase();
  const db = await openDb({ databaseUrl: scratch.url, dataDir: "", max });
  await migrate(db);
  return {
    db,
    async dispose() {
      await db.close();
      await scratch.drop();
    },
  };
}

/**
 * describe() once per backend; `body` registers tests and reads the database through
 * `getDb()` (it only exists once the tests run).
 */
export function describeEachDb(title: string, body: (getDb: () => Db, backend: Backend["name"]) => void): void {
  for (const b of BACKENDS) {
    describe(`${title} [${b.name}]`, { skip: b.skip }, () => {
      let db: Db | undefined;
      let dispose: (() => Promise<void>) | undefined;
      before(async () => {
        ({ db, dispose } = await openFresh(b.name));
      });
      after(async () => {
        await dispose?.();
      });
      body(() => {
        if (!db) throw new Error("database not open yet");
        return db;
      }, b.name);
    });
  }
}

/** A clock tests move by hand, e.g. across midnight KST. */
export function manualClock(start: number) {
  let t = start;
  return {
    now: () => t,
    set(ms: number) {
      t = ms;
    },
    advance(ms: number) {
      t += ms;
    },
  };
}

/**
 * Like Promise.all, but waits for every task before failing. A rejected Promise.all
 * leaves the other tasks running against a database the suite is about to close,
 * which can keep the test process from exiting instead of reporting the failure.
 */
export async function allSettled<T>(tasks: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}
