// watchWrites (src/db/write-watch.ts): told after a write to a watched table is visible,
// never for reads, other tables or statements marked unwatched.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Db } from "../../src/db/index.ts";
import { watchWrites } from "../../src/db/write-watch.ts";
import { openMigratedPglite } from "./harness.ts";

let raw: Db;
let db: Db;
let told = 0;
before(async () => {
  raw = await openMigratedPglite();
  db = watchWrites(raw, ["product_status", "apps"], () => told++);
});
after(() => raw.close());

test("reads, other tables and unwatched writes are not told", async () => {
  told = 0;
  await db.query("SELECT * FROM product_status");
  await db.query("SELECT a.deleted_at FROM apps a WHERE a.app_id = $1 FOR UPDATE OF a", ["app_none"]);
  await db.query("UPDATE settings SET value = value WHERE key = 'none'");
  await db.query("UPDATE apps SET name = name WHERE app_id = 'none'", [], { unwatched: true });
  assert.equal(told, 0);
});

test("a write to a watched table is told after it", async () => {
  told = 0;
  await db.query("INSERT INTO product_status (singleton, status, updated_at) VALUES (true, 'available', now()) ON CONFLICT (singleton) DO UPDATE SET status = 'available'");
  assert.equal(told, 1);
  await db.query("update   APPS set name = name where app_id = 'none'");
  assert.equal(told, 2);
});

test("inside a transaction: told once, after the commit (and after a rollback too)", async () => {
  told = 0;
  await db.transaction(async (tx) => {
    await tx.query("UPDATE apps SET name = name WHERE app_id = 'none'");
    await tx.transaction(async (inner) => inner.query("DELETE FROM apps WHERE app_id = 'none'"));
    assert.equal(told, 0, "not before the commit");
  });
  assert.equal(told, 1);
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.query("UPDATE apps SET name = name WHERE app_id = 'none'");
      throw new Error("rolled back");
    }),
  );
  assert.equal(told, 2);
  await db.transaction(async (tx) => tx.query("SELECT 1"));
  assert.equal(told, 2, "a transaction that only reads is not told");
});
