// Every console route that names an object (app, key, top-up) answers 404 to a
// signed-in member of another organization, and changes nothing. Also the key
// actions themselves: reissue (old key valid 7 days, shown with its end), delete.
import { test } from "node:test";
import assert from "node:assert/strict";
import { REISSUE_GRACE_MS } from "../../src/keys/index.ts";
import { makeHarness } from "../support/harness.ts";
import { createAppVia, shownKey, signedUp } from "./client.ts";

test("another organization's session gets 404 on every object route", async () => {
  // The payment sandbox (opted into, outside production) makes a top-up to own.
  const h = await makeHarness({ env: { TRUST_PROXY: "true", NODE_ENV: "test", PAYMENT_PROVIDER: "sandbox" } });
  try {
    const a = await signedUp(h);
    const b = await signedUp(h);
    const { appId } = await createAppVia(a.client, "Owned by A");
    const [testKey] = await h.services.keys.listKeys(appId);
    await h.admin("PATCH", `/apps/${appId}`, { productEnabled: true });
    await a.client.get("/console/credit");
    const started = await a.client.post("/console/credit/top-ups", { amountKrw: "10000" });
    const topupPath = started.location!;
    assert.match(topupPath, /^\/console\/credit\/top-ups\/top_/);

    await b.client.get("/console/apps"); // B's CSRF token: B is a real, signed-in user
    const routes: [string, string, Record<string, string>?][] = [
      ["GET", `/console/apps/${appId}`],
      ["POST", `/console/apps/${appId}/apply`, { product: "removebg" }],
      ["POST", `/console/apps/${appId}/settings`, { name: "stolen", dailyLimitKrw: "1", monthlyLimitKrw: "" }],
      ["GET", `/console/apps/${appId}/delete`],
      ["POST", `/console/apps/${appId}/delete`],
      ["POST", `/console/apps/${appId}/keys/live`],
      ["POST", `/console/apps/${appId}/keys/test`],
      ["GET", `/console/keys/${testKey.keyId}/reissue`],
      ["POST", `/console/keys/${testKey.keyId}/reissue`],
      ["GET", `/console/keys/${testKey.keyId}/delete`],
      ["POST", `/console/keys/${testKey.keyId}/delete`],
      ["GET", topupPath],
      ["POST", `${topupPath}/confirm`],
    ];
    for (const [method, path, form] of routes) {
      const r = method === "GET" ? await b.client.raw("GET", path) : await b.client.post(path, form ?? {});
      assert.equal(r.status, 404, `${method} ${path}`);
    }
    // Nothing changed for A.
    const app = (await h.services.accounts.getApp(appId))!;
    assert.equal(app.name, "Owned by A");
    assert.equal(app.deletedAt, null);
    assert.equal(app.dailyLimitKrw, null);
    const keys = await h.services.keys.listKeys(appId);
    assert.deepEqual(keys.map((k) => [k.keyId, k.replacedBy]), [[testKey.keyId, null]]);
    assert.equal((await h.services.billing.balances(a.orgId))!.balanceKrw, 0);
    assert.equal((await h.services.billing.balances(b.orgId))!.balanceKrw, 0);
    // B's usage page does not list A's app either.
    assert.ok(!(await b.client.get("/console/usage")).html.includes("Owned by A"));
    assert.ok(!(await b.client.get("/console/apps")).html.includes("Owned by A"));
    // A itself can still do all of it.
    assert.equal((await a.client.get(`/console/apps/${appId}`)).status, 200);
    assert.equal((await a.client.postFollow(`${topupPath}/confirm`)).status, 200);
    assert.equal((await h.services.billing.balances(a.orgId))!.balanceKrw, 10_000);
  } finally {
    await h.close();
  }
});

test("reissue keeps the old key 7 days and shows its end; delete stops a key at once", async () => {
  let t = Date.parse("2031-05-10T03:00:00Z");
  const h = await makeHarness({ env: { TRUST_PROXY: "true" }, now: () => t });
  try {
    const { client: c } = await signedUp(h);
    const { appId, testKey } = await createAppVia(c);
    const [old] = await h.services.keys.listKeys(appId);
    assert.equal((await c.get(`/console/keys/${old.keyId}/reissue`)).status, 200);
    const r = await c.post(`/console/keys/${old.keyId}/reissue`);
    assert.equal(r.status, 200);
    const fresh = shownKey(r.html)!;
    assert.match(fresh, /^pd_test_/);
    assert.notEqual(fresh, testKey);
    assert.match(r.html, new RegExp(`data-testid="old-key-end">${new Date(t + REISSUE_GRACE_MS).toISOString().slice(0, 10)}`));
    assert.equal((await h.services.keys.lookup(testKey)).ok, true, "old key still valid");
    const page = await c.get(`/console/apps/${appId}`);
    assert.match(page.html, /Replaced; valid until 2031-05-17/);

    const newKeyId = (await h.services.keys.listKeys(appId)).find((k) => k.replacedBy === null)!.keyId;
    assert.equal((await c.get(`/console/keys/${newKeyId}/delete`)).status, 200, "confirmation page");
    const del = await c.post(`/console/keys/${newKeyId}/delete`);
    assert.equal(del.status, 303);
    const lookup = await h.services.keys.lookup(fresh);
    assert.equal(lookup.ok, false);
    // A deleted key is gone from the console too.
    assert.equal((await c.raw("GET", `/console/keys/${newKeyId}/delete`)).status, 404);
    // With no current test key, the app offers a new one.
    const p = await c.get(`/console/apps/${appId}`);
    assert.match(p.html, /Issue test key/);
    t += REISSUE_GRACE_MS + 1;
    assert.equal((await h.services.keys.lookup(testKey)).ok, false, "old key expired after 7 days");
  } finally {
    await h.close();
  }
});

test("deleting an app asks first, then its keys stop working", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { client: c } = await signedUp(h);
    const { appId, testKey } = await createAppVia(c);
    const confirm = await c.get(`/console/apps/${appId}/delete`);
    assert.match(confirm.html, /cannot be undone/);
    assert.equal((await h.services.keys.lookup(testKey)).ok, true);
    const done = await c.postFollow(`/console/apps/${appId}/delete`);
    assert.match(done.html, /app was deleted/);
    assert.equal((await h.services.keys.lookup(testKey)).ok, false);
    assert.equal((await c.raw("GET", `/console/apps/${appId}`)).status, 404);
  } finally {
    await h.close();
  }
});
