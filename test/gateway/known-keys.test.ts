// Remembered key rows (src/keys/known-keys.ts): a key in steady use is looked up once a
// second, a change made through this process's database handle applies at once, and
// one made elsewhere (another process: here, a handle the services do not wrap)
// applies within KNOWN_KEY_MEMORY_MS.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { openDb, type Db } from "../../src/db/index.ts";
import { KNOWN_KEY_MEMORY_MS } from "../../src/keys/known-keys.ts";
import { openMigratedPglite } from "../db/harness.ts";
import { expectError, gatewayHarness, TINY_PNG, type GatewayHarness } from "./helpers.ts";

const image = { image_file: TINY_PNG, size: "preview" };
let g: GatewayHarness;
/** The same database, written as another process would: nobody is told. */
let elsewhere: Db;

before(async () => {
  elsewhere = process.env.DATABASE_URL
    ? await openDb({ databaseUrl: process.env.DATABASE_URL, dataDir: "", max: 2 })
    : await openMigratedPglite();
  // On PGlite the services get this very handle (wrapped); on Postgres their own pool.
  g = await gatewayHarness(process.env.DATABASE_URL ? {} : { db: elsewhere });
});
after(async () => {
  await g.close();
  if (process.env.DATABASE_URL) await elsewhere.close();
});

async function ok(res: Response, what: string) {
  assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
  await res.arrayBuffer();
}

test("another process's suspension applies once the remembered row is KNOWN_KEY_MEMORY_MS old, not before", async () => {
  const c = await g.h.customer({ creditKrw: 1000 });
  await ok(await g.removebg(c.liveKey, image), "first call reads the row");
  await elsewhere.query("UPDATE apps SET live_suspended_at = $2 WHERE app_id = $1", [c.appId, new Date(g.clock.now())]);
  g.clock.advance(KNOWN_KEY_MEMORY_MS - 1);
  await ok(await g.removebg(c.liveKey, image), "within the memory");
  g.clock.advance(1);
  await expectError(await g.removebg(c.liveKey, image), 403, "key_suspended");
});

test("a change through the services' own handle applies at once, in a transaction at its commit", async () => {
  const c = await g.h.customer({ creditKrw: 1000 });
  await ok(await g.removebg(c.liveKey, image), "remembered");
  await g.h.services.db.transaction(async (tx) => {
    await tx.query("UPDATE apps SET product_enabled = false WHERE app_id = $1", [c.appId]);
  });
  await expectError(await g.removebg(c.liveKey, image), 403, "product_not_enabled");
  await g.h.services.db.query("UPDATE apps SET product_enabled = true WHERE app_id = $1", [c.appId]);
  await ok(await g.removebg(c.liveKey, image), "enabled again");
});

test("a remembered row is still judged by the clock: a reissued key's predecessor stops at its end", async () => {
  const c = await g.h.customer({ creditKrw: 1000 });
  const re = await g.h.admin("POST", `/keys/${c.liveKeyId}/reissue`);
  assert.equal(re.status, 201, JSON.stringify(re.json));
  const end = Date.parse(re.json.previousValidUntil as string);
  g.clock.set(end - 1);
  await ok(await g.removebg(c.liveKey, image), "just before its end (row read now)");
  g.clock.set(end);
  await expectError(await g.removebg(c.liveKey, image), 401, "invalid_api_key");
});
