// Product and organization states (spec §3, §7 403/503 rows): product not enabled for
// the app (including before review), discontinued, under maintenance, and an
// organization whose refund is being processed. Runs on embedded stores: the product
// status is one row for the whole service and must not leak into other suites that
// share a real database.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertNoOpenHold, balanceOf, expectError, gatewayHarness, TINY_PNG, type GatewayHarness } from "./helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true });
});
after(() => g.close());

const image = { image_file: TINY_PNG, size: "preview" };

async function ok(res: Response, what: string) {
  assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
  await res.arrayBuffer();
}

async function setProduct(status: string) {
  const r = await g.h.admin("PUT", "/product", { status });
  assert.equal(r.status, 200);
  assert.equal(r.json.status, status);
}

describe("403 product_not_enabled", () => {
  test("an app is created with the product off (before review): both keys refused", async () => {
    const org = await g.h.admin("POST", "/orgs", { email: `u${crypto.randomUUID()}@example.com` });
    await g.h.admin("POST", `/orgs/${org.json.orgId}/credit`, { amountKrw: 1000 });
    const app = await g.h.admin("POST", `/orgs/${org.json.orgId}/apps`, { name: "new app" });
    assert.equal(app.status, 201);
    const live = await g.h.admin("POST", `/apps/${app.json.appId}/keys`, { kind: "live" });
    const testKey = await g.h.admin("POST", `/apps/${app.json.appId}/keys`, { kind: "test" });
    await expectError(await g.removebg(live.json.key, image), 403, "product_not_enabled");
    const t = await g.removebg(testKey.json.key, image);
    assert.equal(t.headers.get("x-pd-test-size"), "preview");
    await expectError(t, 403, "product_not_enabled");
    assert.equal((await g.h.admin("PATCH", `/apps/${app.json.appId}`, { productEnabled: true })).status, 200);
    await ok(await g.removebg(live.json.key, image), "after the product was enabled");
  });

  test("switching the product off again refuses calls at once", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    await ok(await g.removebg(c.liveKey, image), "enabled");
    await g.h.admin("PATCH", `/apps/${c.appId}`, { productEnabled: false });
    await expectError(await g.removebg(c.liveKey, image), 403, "product_not_enabled");
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 1000 - 22);
    await assertNoOpenHold(g.h, c.orgId);
  });
});

describe("403 refund_pending", () => {
  test("paid calls are refused while a refund is processed; the test key still works", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    assert.equal((await g.h.admin("PATCH", `/orgs/${c.orgId}`, { refundPending: true })).json.refundPending, true);
    await expectError(await g.removebg(c.liveKey, image), 403, "refund_pending");
    await ok(await g.removebg(c.testKey, image), "test key");
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
    await g.h.admin("PATCH", `/orgs/${c.orgId}`, { refundPending: false });
    await ok(await g.removebg(c.liveKey, image), "after the refund");
  });
});

describe("product status set by the operator", () => {
  test("403 product_discontinued for live and test keys", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    await setProduct("discontinued");
    try {
      const e = await expectError(await g.removebg(c.liveKey, image), 403, "product_discontinued");
      assert.equal(e.retryAfter, null);
      await expectError(await g.removebg(c.testKey, image), 403, "product_discontinued");
    } finally {
      await setProduct("available");
    }
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 1000);
    await ok(await g.removebg(c.liveKey, image), "available again");
  });

  test("503 service_unavailable with Retry-After during maintenance", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    await setProduct("maintenance");
    try {
      const e = await expectError(await g.removebg(c.liveKey, image), 503, "service_unavailable");
      assert.equal(e.retryAfter, "300", "DECISIONS.md: maintenance Retry-After is 300");
      const t = await expectError(await g.removebg(c.testKey, image), 503, "service_unavailable");
      assert.equal(t.retryAfter, "300");
    } finally {
      await setProduct("available");
    }
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 1000);
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("a key problem is reported before the product status", async () => {
    await setProduct("maintenance");
    try {
      await expectError(await g.removebg("pd_live_" + "Q".repeat(40), image), 401, "invalid_api_key");
    } finally {
      await setProduct("available");
    }
  });
});
