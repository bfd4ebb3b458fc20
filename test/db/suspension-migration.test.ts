// Migration 0011 moves an operator's suspension from the key to its app's access of the
// key's kind: a database that held suspended keys (one the customer had deleted and
// issued around, one replaced by a reissue) keeps every such app refused afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_MIGRATIONS_DIR, migrate } from "../../src/db/index.ts";
import { openMigratedPglite } from "./harness.ts";

const SUSPENSION = "0011_access_suspension_and_link_voiding.sql";

test("suspensions on keys before migration 0011 become their apps' (deleted and replaced keys too); other apps stay unsuspended", async () => {
  const source = fileURLToPath(DEFAULT_MIGRATIONS_DIR);
  const dir = await mkdtemp(join(tmpdir(), "pd-mig-"));
  const db = await openMigratedPglite({ blank: true });
  try {
    for (const f of await readdir(source)) if (f.endsWith(".sql") && f < SUSPENSION) await copyFile(join(source, f), join(dir, f));
    await migrate(db, dir);
    const t = new Date("2031-01-01T00:00:00Z");
    await db.exec(`
      INSERT INTO users (user_id, email, created_at) VALUES ('usr_a', 'a@example.com', '${t.toISOString()}');
      INSERT INTO organizations (org_id, owner_user_id, created_at) VALUES ('org_a', 'usr_a', '${t.toISOString()}');
      INSERT INTO apps (app_id, org_id, name, created_at) VALUES
        ('app_deleted_around', 'org_a', 'a', '${t.toISOString()}'), ('app_replaced', 'org_a', 'b', '${t.toISOString()}'), ('app_clear', 'org_a', 'c', '${t.toISOString()}');
      INSERT INTO api_keys (key_id, app_id, kind, hash, prefix, last4, created_at, deleted_at, suspended_at) VALUES
        ('key_1', 'app_deleted_around', 'live', 'h1', 'pd_live_aaaa', 'aaaa', '${t.toISOString()}', '${t.toISOString()}', '${t.toISOString()}'),
        ('key_2', 'app_deleted_around', 'live', 'h2', 'pd_live_bbbb', 'bbbb', '${t.toISOString()}', NULL, NULL),
        ('key_4', 'app_replaced', 'test', 'h4', 'pd_test_dddd', 'dddd', '${t.toISOString()}', NULL, NULL),
        ('key_5', 'app_clear', 'live', 'h5', 'pd_live_eeee', 'eeee', '${t.toISOString()}', NULL, NULL);
      INSERT INTO api_keys (key_id, app_id, kind, hash, prefix, last4, created_at, expires_at, suspended_at, replaced_by) VALUES
        ('key_3', 'app_replaced', 'test', 'h3', 'pd_test_cccc', 'cccc', '${t.toISOString()}', '${t.toISOString()}', '${t.toISOString()}', 'key_4');
    `);
    await copyFile(join(source, SUSPENSION), join(dir, SUSPENSION));
    assert.deepEqual((await migrate(db, dir)).applied, [SUSPENSION]);
    const rows = await db.query<{ app_id: string; live: boolean; test: boolean }>(
      "SELECT app_id, live_suspended_at IS NOT NULL AS live, test_suspended_at IS NOT NULL AS test FROM apps ORDER BY app_id",
    );
    assert.deepEqual(rows, [
      { app_id: "app_clear", live: false, test: false },
      { app_id: "app_deleted_around", live: true, test: false },
      { app_id: "app_replaced", live: false, test: true },
    ]);
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
});
