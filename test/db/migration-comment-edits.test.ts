// Comment-only edits to applied migrations: a database migrated with a file's earlier
// text still starts after the comment was reworded, when the earlier text's checksum is
// listed for that version in migrations/checksums-before-comment-edits.json. Anything
// not listed (a changed statement, a checksum listed for another version) still stops
// start-up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, loadMigrations, DEFAULT_MIGRATIONS_DIR } from "../../src/db/index.ts";
import { EARLIER_CHECKSUMS_FILE } from "../../src/db/migrate.ts";
import { openMigratedPglite } from "./harness.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

test("a database migrated with the earlier text starts with the comment-edited file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pd-mig-"));
  const db = await openMigratedPglite({ blank: true });
  try {
    const before = "-- Old wording of the comment.\nCREATE TABLE a (x int);\n";
    const after = "-- What the table holds, reworded.\nCREATE TABLE a (x int);\n";
    await writeFile(join(dir, "0001_a.sql"), before);
    await writeFile(join(dir, "0002_b.sql"), "CREATE TABLE b (x int);\n");
    assert.deepEqual((await migrate(db, dir)).applied, ["0001_a.sql", "0002_b.sql"]);

    // The comment is reworded: without the list, start-up stops.
    await writeFile(join(dir, "0001_a.sql"), after);
    await assert.rejects(migrate(db, dir), /0001_a\.sql was changed/);

    // A checksum listed under another version excuses nothing.
    const list = (versions: Record<string, { now: string; before: string[] }>) =>
      writeFile(join(dir, EARLIER_CHECKSUMS_FILE), JSON.stringify({ about: "test", versions }));
    await list({ "0002": { now: sha256("CREATE TABLE b (x int);\n"), before: [sha256(before)] } });
    await assert.rejects(migrate(db, dir), /0001_a\.sql was changed/);

    // Listed under its own version: the database starts and nothing runs again.
    await list({ "0001": { now: sha256(after), before: [sha256(before)] } });
    assert.deepEqual(await migrate(db, dir), { applied: [], skipped: ["0001_a.sql", "0002_b.sql"] });

    // A changed statement is not excused by the earlier comment's checksum: the list
    // names the text it excuses.
    await writeFile(join(dir, "0001_a.sql"), "-- What the table holds, reworded.\nCREATE TABLE a (x bigint);\n");
    await assert.rejects(migrate(db, dir), /0001_a\.sql was changed/);

    // A fresh database applies the current text and records its checksum.
    await writeFile(join(dir, "0001_a.sql"), after);
    const fresh = await openMigratedPglite({ blank: true });
    try {
      assert.deepEqual((await migrate(fresh, dir)).applied, ["0001_a.sql", "0002_b.sql"]);
      const [row] = await fresh.query<{ checksum: string }>("SELECT checksum FROM schema_migrations WHERE version = '0001'");
      assert.equal(row?.checksum, sha256(after));
    } finally {
      await fresh.close();
    }
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("a malformed list or one naming a missing version stops start-up", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pd-mig-"));
  try {
    await writeFile(join(dir, "0001_a.sql"), "CREATE TABLE a (x int);\n");
    await writeFile(join(dir, EARLIER_CHECKSUMS_FILE), JSON.stringify({ versions: { "0009": { now: "0".repeat(64), before: ["1".repeat(64)] } } }));
    await assert.rejects(loadMigrations(dir), /names version 0009/);
    await writeFile(join(dir, EARLIER_CHECKSUMS_FILE), JSON.stringify({ versions: { "0001": { now: "0".repeat(64), before: ["not a checksum"] } } }));
    await assert.rejects(loadMigrations(dir), /sha-256/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the repository's migrations: databases that recorded the earlier texts start", async () => {
  const files = await loadMigrations();
  const edited = files.filter((f) => f.accepted.length > 1);
  const listed = JSON.parse(await readFile(new URL(EARLIER_CHECKSUMS_FILE, DEFAULT_MIGRATIONS_DIR), "utf8")) as {
    versions: Record<string, { now: string }>;
  };
  // Every entry names the file as it is now (an entry for an older text excuses nothing).
  assert.deepEqual(edited.map((f) => f.version), Object.keys(listed.versions).sort(), "each listed version's now is the current text");
  const db = await openMigratedPglite();
  try {
    // As a database migrated before the edits has them: the earlier checksums recorded.
    for (const f of edited) {
      assert.ok(!f.accepted.slice(1).includes(f.checksum), `${f.name}: an earlier checksum is a different text`);
      await db.query("UPDATE schema_migrations SET checksum = $1 WHERE version = $2", [f.accepted[1], f.version]);
    }
    const again = await migrate(db);
    assert.deepEqual(again.applied, []);
    assert.deepEqual(again.skipped, files.map((f) => f.name));
  } finally {
    await db.close();
  }
});
