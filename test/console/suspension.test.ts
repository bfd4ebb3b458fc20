// An operator's suspension is the app's access of one kind (docs/DECISIONS.md
// "Suspension"): every key of that app and kind answers 403 key_suspended, whatever the
// customer does in the console, until the operator lifts it. Through HTTP only: the
// console's pages and forms, the operator API and POST /v1.0/removebg.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { REISSUE_GRACE_MS } from "../../src/keys/index.ts";
import { expectError, gatewayHarness, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { createAppVia, shownKey, signedUp, type Client } from "./client.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const image = { image_file: TINY_PNG, size: "preview" };

async function served(res: Response, what: string) {
  assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
  await res.arrayBuffer();
}

/** A customer signed in to the console, with an enabled app, credit, and its test and live keys. */
async function consoleCustomer() {
  const { client, orgId } = await signedUp(g.h);
  const { appId, testKey } = await createAppVia(client);
  assert.equal((await g.h.admin("PATCH", `/apps/${appId}`, { productEnabled: true })).status, 200);
  assert.equal((await g.h.admin("POST", `/orgs/${orgId}/credit`, { amountKrw: 10_000 })).status, 200);
  await client.get(`/console/apps/${appId}`);
  const liveKey = shownKey((await client.post(`/console/apps/${appId}/keys/live`)).html)!;
  assert.match(liveKey, /^pd_live_/);
  const ids = async (kind: "test" | "live") => (await g.h.services.keys.listKeys(appId)).filter((k) => k.kind === kind).map((k) => k.keyId);
  return { client, orgId, appId, testKey, liveKey, testKeyId: (await ids("test"))[0]!, liveKeyId: (await ids("live"))[0]!, ids };
}

/** Every way the console offers to get a key of `kind` out of the suspension's reach: each refused 403, nothing changed. */
async function consoleRefuses(client: Client, appId: string, keyId: string, kind: "test" | "live") {
  const page = await client.get(`/console/apps/${appId}`);
  assert.match(page.html, new RegExp(`data-testid="suspended-${kind}"`), "the app page says so");
  assert.doesNotMatch(page.html, new RegExp(`/console/keys/${keyId}/(delete|reissue)`), "no delete or reissue link");
  assert.doesNotMatch(page.html, new RegExp(`/console/apps/${appId}/keys/${kind}"`), "no issue button");
  assert.doesNotMatch(page.html, new RegExp(`/console/apps/${appId}/delete`), "no app delete link");
  for (const path of [`/console/keys/${keyId}/delete`, `/console/keys/${keyId}/reissue`, `/console/apps/${appId}/delete`]) {
    assert.equal((await client.get(path)).status, 403, `GET ${path}`);
  }
  await client.get(`/console/apps/${appId}`);
  for (const path of [`/console/keys/${keyId}/delete`, `/console/keys/${keyId}/reissue`, `/console/apps/${appId}/keys/${kind}`, `/console/apps/${appId}/delete`]) {
    const r = await client.post(path);
    assert.equal(r.status, 403, `POST ${path}`);
    assert.match(r.html, /Suspended by the operator/, `POST ${path}`);
  }
  const keys = await g.h.services.keys.listKeys(appId);
  assert.deepEqual(keys.filter((k) => k.kind === kind).map((k) => k.keyId), [keyId], "the key is still there, and no other of its kind");
  assert.ok(await g.h.services.accounts.getApp(appId).then((a) => a?.deletedAt === null), "the app is still there");
}

test("a suspended live key stays refused: the customer cannot delete or reissue it, issue another or delete its app; the operator's lift restores it", async () => {
  const c = await consoleCustomer();
  await served(await g.removebg(c.liveKey, image), "before");
  assert.equal((await g.h.admin("POST", `/keys/${c.liveKeyId}/suspend`)).status, 200);
  await expectError(await g.removebg(c.liveKey, image), 403, "key_suspended");

  await consoleRefuses(c.client, c.appId, c.liveKeyId, "live");
  await expectError(await g.removebg(c.liveKey, image), 403, "key_suspended");
  await served(await g.removebg(c.testKey, image), "the app's test key is another access");

  // The operator deletes the key: no live key is left, and still none can be issued.
  assert.equal((await g.h.admin("DELETE", `/keys/${c.liveKeyId}`)).status, 200);
  await expectError(await g.removebg(c.liveKey, image), 401, "invalid_api_key");
  const page = await c.client.get(`/console/apps/${c.appId}`);
  assert.match(page.html, /data-testid="suspended-live"/);
  assert.doesNotMatch(page.html, /Issue live key/);
  assert.equal((await c.client.post(`/console/apps/${c.appId}/keys/live`)).status, 403);
  const byOperator = await g.h.admin("POST", `/apps/${c.appId}/keys`, { kind: "live" });
  assert.deepEqual([byOperator.status, byOperator.json.errors?.[0]?.code], [403, "key_suspended"], "the operator lifts it first");
  assert.deepEqual(await c.ids("live"), []);

  // Lifted through the deleted key's ID: the customer issues a live key, and it is served and charged.
  assert.equal((await g.h.admin("POST", `/keys/${c.liveKeyId}/unsuspend`)).status, 200);
  await c.client.get(`/console/apps/${c.appId}`);
  const fresh = shownKey((await c.client.post(`/console/apps/${c.appId}/keys/live`)).html)!;
  const paid = await g.removebg(fresh, image);
  assert.equal(paid.headers.get("x-pd-charged-krw"), "22");
  await served(paid, "after the lift");
});

test("after an operator reissue K1→K2, suspending either refuses both during the 7-day overlap; lifting either restores both", async () => {
  const c = await g.h.customer({ creditKrw: 10_000 });
  const r = await g.h.admin("POST", `/keys/${c.liveKeyId}/reissue`);
  assert.equal(r.status, 201);
  const k2 = { key: r.json.key as string, id: r.json.keyId as string };
  await served(await g.removebg(c.liveKey, image), "K1 in its overlap");
  await served(await g.removebg(k2.key, image), "K2");

  for (const [suspended, lifted] of [[k2.id, c.liveKeyId], [c.liveKeyId, k2.id]]) {
    assert.equal((await g.h.admin("POST", `/keys/${suspended}/suspend`)).status, 200);
    await expectError(await g.removebg(c.liveKey, image), 403, "key_suspended");
    await expectError(await g.removebg(k2.key, image), 403, "key_suspended");
    const view = await g.h.admin("POST", `/keys/${lifted}/unsuspend`);
    assert.equal(view.json.suspended, false);
    await served(await g.removebg(c.liveKey, image), "K1 after the lift");
    await served(await g.removebg(k2.key, image), "K2 after the lift");
  }
  await served(await g.removebg(c.testKey, image), "the test key was never touched");
  g.clock.advance(REISSUE_GRACE_MS);
  await expectError(await g.removebg(c.liveKey, image), 401, "invalid_api_key");
  await served(await g.removebg(k2.key, image), "K2 after the overlap");
});

test("a suspended test key: refused, in the playground too; the customer cannot delete, reissue or replace it; the live key is served", async () => {
  const c = await consoleCustomer();
  assert.equal((await g.h.admin("POST", `/keys/${c.testKeyId}/suspend`)).status, 200);
  await expectError(await g.removebg(c.testKey, image), 403, "key_suspended");
  assert.match((await c.client.get(`/console/apps/${c.appId}/playground`)).html, /it is suspended/);
  await consoleRefuses(c.client, c.appId, c.testKeyId, "test");
  await served(await g.removebg(c.liveKey, image), "the live key is another access");

  // Deleted by the operator: no test key is issued around the suspension either.
  assert.equal((await g.h.admin("DELETE", `/keys/${c.testKeyId}`)).status, 200);
  await c.client.get(`/console/apps/${c.appId}`);
  assert.equal((await c.client.post(`/console/apps/${c.appId}/keys/test`)).status, 403);
  assert.deepEqual(await c.ids("test"), []);
  assert.equal((await g.h.admin("POST", `/keys/${c.testKeyId}/unsuspend`)).status, 200);
  await c.client.get(`/console/apps/${c.appId}`);
  const fresh = shownKey((await c.client.post(`/console/apps/${c.appId}/keys/test`)).html)!;
  await served(await g.removebg(fresh, image), "a test key issued after the lift");
});
