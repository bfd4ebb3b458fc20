// GET /v1.0/account (beyond the spec, as the mirrored API has it): the live key's
// balance and available credit, the test key's remaining free calls; free, never
// charged, and the same key errors as removebg.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { balanceOf, expectError, gatewayHarness, heldProduct, randomIp, TINY_PNG, type GatewayHarness } from "./helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

interface AccountBody {
  data: { kind: "live" | "test"; balanceKrw?: number; availableKrw?: number; testCallsRemaining?: number; testQuota?: string };
}

async function account(key: string, app = g) {
  const res = await app.account(key);
  assert.equal(res.status, 200, await res.clone().text());
  assert.match(res.headers.get("x-pd-request-id") ?? "", /^req_/);
  assert.equal(res.headers.get("x-pd-charged-krw"), null, "never charged");
  return { res, body: (await res.json()) as AccountBody };
}

describe("GET /v1.0/account", () => {
  test("live key: balance and available credit (open holds subtracted)", async () => {
    const c = await g.h.customer({ creditKrw: 5000 });
    assert.deepEqual((await account(c.liveKey)).body.data, { kind: "live", balanceKrw: 5000, availableKrw: 5000 });
    const held = heldProduct();
    const v = g.variant({ product: held.fn });
    const running = v.removebg(c.liveKey, { image_file: TINY_PNG });
    await held.untilArrived(1);
    assert.deepEqual((await account(c.liveKey)).body.data, { kind: "live", balanceKrw: 5000, availableKrw: 4890 });
    held.releaseAll();
    assert.equal((await running).status, 200);
    assert.deepEqual((await account(c.liveKey)).body.data, { kind: "live", balanceKrw: 4978, availableKrw: 4978 });
  });

  test("test key: remaining free calls this month, with the test headers", async () => {
    const c = await g.h.customer({ live: false });
    let r = await account(c.testKey);
    assert.deepEqual(r.body.data, { kind: "test", testCallsRemaining: 50, testQuota: "monthly" });
    assert.equal(r.res.headers.get("x-pd-test-size"), "preview");
    assert.equal(r.res.headers.get("x-pd-test-remaining"), "50");
    assert.equal((await g.removebg(c.testKey, { image_file: TINY_PNG })).status, 200);
    r = await account(c.testKey);
    assert.equal(r.body.data.testCallsRemaining, 49);
    // Asking is free: it takes no call.
    for (let i = 0; i < 5; i++) await account(c.testKey);
    assert.equal((await account(c.testKey)).body.data.testCallsRemaining, 49);
  });

  test("an operator-reduced organization reports its lifetime allowance", async () => {
    const c = await g.h.customer({ live: false });
    await g.h.admin("PATCH", `/orgs/${c.orgId}`, { testQuota: "lifetime" });
    await g.h.services.db.query("INSERT INTO test_usage (org_id, period, count) VALUES ($1, 'lifetime', 45)", [c.orgId]);
    assert.deepEqual((await account(c.testKey)).body.data, { kind: "test", testCallsRemaining: 5, testQuota: "lifetime" });
  });

  test("never charged, no hold", async () => {
    const c = await g.h.customer({ creditKrw: 300 });
    for (let i = 0; i < 10; i++) await account(c.liveKey);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 300, availableKrw: 300 });
    const holds = await g.h.services.db.query("SELECT 1 FROM holds WHERE org_id = $1", [c.orgId]);
    assert.equal(holds.length, 0);
  });

  test("the same key errors as removebg", async () => {
    const ip = randomIp();
    await expectError(await g.account(undefined, { ip }), 401, "invalid_api_key");
    await expectError(await g.account("not-a-key", { ip }), 401, "invalid_api_key");
    await expectError(await g.account("pd_live_" + "u".repeat(40), { ip }), 401, "invalid_api_key");
    const c = await g.h.customer({ creditKrw: 100 });
    await g.h.admin("POST", `/keys/${c.testKeyId}/suspend`);
    await expectError(await g.account(c.testKey), 403, "key_suspended");
    await g.h.admin("DELETE", `/keys/${c.liveKeyId}`);
    await expectError(await g.account(c.liveKey, { ip }), 401, "invalid_api_key");
  });
});
