import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb, migrate, loadMigrations, isUniqueViolation, newId, randomBase62 } from "../../src/db/index.ts";
import { allSettled, describeEachDb, createScratchDatabase, openMigratedPglite } from "./harness.ts";
import { loadOrCreatePepper } from "../../src/keys/index.ts";
import { openPglite } from "../../src/db/pglite-db.ts";

describeEachDb("db", (getDb, backend) => {
  test("reports its kind", () => {
    assert.equal(getDb().kind, backend);
  });

  test("a statement run with `prepare` gives the same rows; on Postgres it is prepared on its connection", async () => {
    await getDb().transaction(async (tx) => {
      const a = await tx.query<{ x: number }>("SELECT $1::int + 1 AS x", [1], { prepare: "pd_test_plus_one" });
      const b = await tx.query<{ x: number }>("SELECT $1::int + 1 AS x", [41], { prepare: "pd_test_plus_one" });
      assert.deepEqual([a, b], [[{ x: 2 }], [{ x: 42 }]]);
      // The same session (one client inside a transaction) shows what it has prepared.
      const prepared = await tx.query("SELECT name FROM pg_prepared_statements WHERE name = $1", ["pd_test_plus_one"]);
      assert.equal(prepared.length, backend === "postgres" ? 1 : 0);
    });
  });

  test("bigint, numeric sums and timestamptz come back as numbers", async () => {
    const at = Date.UTC(2026, 10, 1, 15, 0, 0, 123);
    const [row] = await getDb().query<{ big: number; total: number; at: number; n: null }>(
      "SELECT 9007199254740991::bigint AS big, sum(x) AS total, $1::timestamptz AS at, NULL::bigint AS n FROM (VALUES (1::bigint), (2::bigint)) v(x)",
      [new Date(at)],
    );
    assert.deepEqual(row, { big: Number.MAX_SAFE_INTEGER, total: 3, at, n: null });
  });

  test("a bigint beyond 2^53 is refused rather than rounded", async () => {
    await assert.rejects(getDb().query("SELECT 9007199254740993::bigint AS x"), RangeError);
  });

  test("transaction commits on return and rolls back on throw", async () => {
    const db = getDb();
    const k1 = `t_${randomBase62(8)}`;
    const k2 = `t_${randomBase62(8)}`;
    const out = await db.transaction(async (tx) => {
      await tx.query("INSERT INTO settings (key, value) VALUES ($1, 'a')", [k1]);
      return 42;
    });
    assert.equal(out, 42);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO settings (key, value) VALUES ($1, 'b')", [k2]);
        throw new Error("boom");
      }),
      /boom/,
    );
    const rows = await db.query<{ key: string }>("SELECT key FROM settings WHERE key IN ($1, $2)", [k1, k2]);
    assert.deepEqual(rows.map((r) => r.key), [k1]);
  });

  test("concurrent read-modify-write transactions do not lose updates", async () => {
    const db = getDb();
    const key = `c_${randomBase62(8)}`;
    await db.query("INSERT INTO settings (key, value) VALUES ($1, '0')", [key]);
    await allSettled(
      Array.from({ length: 40 }, () =>
        db.transaction(async (tx) => {
          const [r] = await tx.query<{ value: string }>("SELECT value FROM settings WHERE key = $1 FOR UPDATE", [key]);
          await tx.query("UPDATE settings SET value = $2 WHERE key = $1", [key, String(Number(r.value) + 1)]);
        }),
      ),
    );
    const [r] = await db.query<{ value: string }>("SELECT value FROM settings WHERE key = $1", [key]);
    assert.equal(r.value, "40");
  });

  test("unique violations are recognised", async () => {
    const db = getDb();
    const key = `u_${randomBase62(8)}`;
    await db.query("INSERT INTO settings (key, value) VALUES ($1, 'x')", [key]);
    const err = await db.query("INSERT INTO settings (key, value) VALUES ($1, 'y')", [key]).catch((e: unknown) => e);
    assert.ok(isUniqueViolation(err));
  });

  test("migrate a second time applies nothing", async () => {
    const files = await loadMigrations();
    const again = await migrate(getDb());
    assert.deepEqual(again.applied, []);
    assert.deepEqual(again.skipped, files.map((f) => f.name));
    const rows = await getDb().query<{ version: string }>("SELECT version FROM schema_migrations ORDER BY version");
    assert.deepEqual(rows.map((r) => r.version), files.map((f) => f.version));
  });
});

test("a migration edited after it was applied stops start-up", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pd-mig-"));
  const db = await openMigratedPglite({ blank: true });
  try {
    await writeFile(join(dir, "0001_a.sql"), "CREATE TABLE a (x int);");
    assert.deepEqual((await migrate(db, dir)).applied, ["0001_a.sql"]);
    await writeFile(join(dir, "0002_b.sql"), "CREATE TABLE b (x int); INSERT INTO b VALUES (1), (2);");
    assert.deepEqual(await migrate(db, dir), { applied: ["0002_b.sql"], skipped: ["0001_a.sql"] });
    await writeFile(join(dir, "0001_a.sql"), "CREATE TABLE a (x bigint);");
    await assert.rejects(migrate(db, dir), /0001_a\.sql was changed/);
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("a failing migration leaves nothing behind", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pd-mig-"));
  const db = await openMigratedPglite({ blank: true });
  try {
    await writeFile(join(dir, "0001_bad.sql"), "CREATE TABLE half (x int); SELECT no_such_function();");
    await assert.rejects(migrate(db, dir));
    // The whole transaction is gone, including its schema_migrations row (and table).
    const rows = await db.query("SELECT tablename FROM pg_tables WHERE tablename IN ('half', 'schema_migrations')");
    assert.deepEqual(rows, []);
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("PGlite in a data directory keeps its data across restarts", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pd-pglite-"));
  try {
    const dataDir = join(dir, "nested", "pglite");
    // Seeded from the migrated template to skip a slow initdb; the restart below is
    // the ordinary openDb path.
    const template = await openMigratedPglite();
    const seed = await template.dumpDataDir();
    await template.close();
    const first = await openPglite(dataDir, { loadDataDir: seed });
    await first.query("INSERT INTO settings (key, value) VALUES ('persist', 'yes')");
    const pepper = await loadOrCreatePepper(first);
    await first.close();
    const second = await openDb({ dataDir });
    assert.deepEqual((await migrate(second)).applied, []);
    const rows = await second.query<{ value: string }>("SELECT value FROM settings WHERE key = 'persist'");
    assert.equal(rows[0]?.value, "yes");
    assert.equal(await loadOrCreatePepper(second), pepper, "the generated key pepper survives a restart");
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("processes starting together on Postgres apply each migration once", { skip: !process.env.DATABASE_URL }, async () => {
  const scratch = await createScratchDatabase();
  const dbs = await allSettled(
    Array.from({ length: 5 }, () => openDb({ databaseUrl: scratch.url, dataDir: "", max: 2 })),
  );
  try {
    const results = await allSettled(dbs.map((db) => migrate(db)));
    const files = await loadMigrations();
    const appliedCounts = files.map((f) => results.filter((r) => r.applied.includes(f.name)).length);
    assert.deepEqual(appliedCounts, files.map(() => 1));
    const rows = await dbs[0].query<{ n: number }>("SELECT count(*) AS n FROM schema_migrations");
    assert.equal(rows[0].n, files.length);
  } finally {
    await allSettled(dbs.map((db) => db.close()));
    await scratch.drop();
  }
});

test("random IDs carry their prefix and use the whole base62 alphabet evenly", () => {
  assert.match(newId("org"), /^org_[0-9A-Za-z]{22}$/);
  const counts = new Map<string, number>();
  const sample = randomBase62(62 * 2000);
  for (const ch of sample) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  assert.equal(counts.size, 62);
  // Expected 2000 each; a modulo bias would put the first 8 characters near 2250.
  for (const [ch, n] of counts) assert.ok(n > 1750 && n < 2250, `${ch}: ${n}`);
});
