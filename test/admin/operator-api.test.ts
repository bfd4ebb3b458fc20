// The operator API under /admin/v1: bearer-token
// protection, every route's success shape, and 400/404/409 on bad input, all in the
// one error envelope with X-PD-Request-Id. PUT /product changes a service-wide row, so
// its success path is tested on embedded stores in test/gateway/product-state.test.ts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { expectError, gatewayHarness, randomIp, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";

const DAY = 86_400_000;
let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const email = () => `op${crypto.randomUUID()}@example.com`;

/**
 * A raw operator call, for bodies that are not JSON and for other tokens. Each from an
 * address of its own: wrong tokens from one address are throttled (operator-token.test.ts).
 */
function raw(method: string, path: string, init: { body?: string; token?: string | null; auth?: string } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-forwarded-for": randomIp() };
  if (init.auth !== undefined) headers.authorization = init.auth;
  else if (init.token !== null) headers.authorization = `Bearer ${init.token ?? OPERATOR_TOKEN}`;
  return g.h.app.request(`/admin/v1${path}`, { method, headers, body: init.body });
}

/** Checks an h.admin() answer (body already parsed) for the error envelope. */
function expectAdmin(r: { status: number; json: Record<string, any>; res: Response }, status: number, code: string) {
  const errors = r.json.errors as { code: string; title: string }[] | undefined;
  assert.ok(Array.isArray(errors) && errors.length === 1, JSON.stringify(r.json));
  assert.equal(`${r.status} ${errors[0]!.code}`, `${status} ${code}`, errors[0]!.title);
  assert.equal(typeof errors[0]!.title, "string");
  assert.match(r.res.headers.get("x-pd-request-id") ?? "", /^req_[0-9a-z]{26}$/);
  return errors[0]!;
}

async function newOrg() {
  const r = await g.h.admin("POST", "/orgs", { email: email() });
  assert.equal(r.status, 201);
  return r.json.orgId as string;
}

async function newApp(orgId: string, productEnabled = true) {
  const r = await g.h.admin("POST", `/orgs/${orgId}/apps`, { name: "app", productEnabled });
  assert.equal(r.status, 201);
  return r.json.appId as string;
}

describe("operator token", () => {
  const routes: [string, string][] = [
    ["POST", "/orgs"],
    ["GET", "/orgs/org_x"],
    ["PATCH", "/orgs/org_x"],
    ["POST", "/orgs/org_x/credit"],
    ["POST", "/orgs/org_x/apps"],
    ["PATCH", "/apps/app_x"],
    ["POST", "/apps/app_x/keys"],
    ["POST", "/keys/key_x/reissue"],
    ["POST", "/keys/key_x/suspend"],
    ["POST", "/keys/key_x/unsuspend"],
    ["DELETE", "/keys/key_x"],
    ["PUT", "/product"],
    ["GET", "/product"],
    ["GET", "/requests/req_x"],
    ["GET", "/no-such-route"],
  ];
  test("every route answers 401 without the token, with a wrong one, or another scheme", async () => {
    for (const [method, path] of routes) {
      for (const init of [{ token: null }, { token: "wrong-token-0123456789" }, { auth: `Basic ${btoa(`op:${OPERATOR_TOKEN}`)}` }, { auth: "Bearer" }]) {
        const res = await raw(method, path, { ...init, body: method === "GET" || method === "DELETE" ? undefined : "{}" });
        const e = await expectError(res.clone(), 401, "unauthorized");
        assert.equal(res.headers.get("www-authenticate"), "Bearer", `${method} ${path}`);
        assert.equal(e.retryAfter, null);
      }
    }
  });

  test("a token that only starts like the real one is refused", async () => {
    await expectError(await raw("GET", "/product", { token: OPERATOR_TOKEN.slice(0, -1) }), 401, "unauthorized");
    await expectError(await raw("GET", "/product", { token: `${OPERATOR_TOKEN}x` }), 401, "unauthorized");
    assert.equal((await raw("GET", "/product")).status, 200);
  });

  test("unknown routes are 404 in the envelope", async () => {
    await expectError(await raw("GET", "/no-such-route"), 404, "not_found");
  });
});

describe("organizations", () => {
  test("POST /orgs creates a verified owner and an org; GET shows its defaults", async () => {
    const address = email();
    const r = await g.h.admin("POST", "/orgs", { email: address });
    assert.equal(r.status, 201);
    assert.match(r.json.orgId, /^org_/);
    assert.match(r.json.userId, /^usr_/);
    assert.match(r.res.headers.get("x-pd-request-id") ?? "", /^req_/);
    const user = await g.h.services.accounts.getUser(r.json.userId);
    assert.ok(user?.verifiedAt, "the owner is verified");
    const org = await g.h.admin("GET", `/orgs/${r.json.orgId}`);
    assert.equal(org.status, 200);
    assert.deepEqual(
      { ...org.json, ownerUserId: undefined },
      { orgId: r.json.orgId, ownerUserId: undefined, balanceKrw: 0, availableKrw: 0, dailyLimitKrw: 50_000, refundPending: false, testQuota: "monthly" },
    );
    // One account per address, whatever its case.
    await expectAdmin(await g.h.admin("POST", "/orgs", { email: address.toUpperCase() }), 409, "conflict");
  });

  test("POST /orgs rejects bad bodies", async () => {
    for (const body of ['{"email":"not-an-address"}', "{}", '{"email":42}', `{"email":"${email()}","extra":1}`, "{not json", "[]"]) {
      await expectError(await raw("POST", "/orgs", { body }), 400, "invalid_parameter");
    }
  });

  test("PATCH /orgs sets the daily limit (0..1,000,000), refund state and test quota", async () => {
    const orgId = await newOrg();
    const p = await g.h.admin("PATCH", `/orgs/${orgId}`, { dailyLimitKrw: 1_000_000, refundPending: true, testQuota: "lifetime" });
    assert.equal(p.status, 200);
    assert.deepEqual([p.json.dailyLimitKrw, p.json.refundPending, p.json.testQuota], [1_000_000, true, "lifetime"]);
    assert.equal((await g.h.admin("PATCH", `/orgs/${orgId}`, { dailyLimitKrw: 0 })).json.dailyLimitKrw, 0);
    for (const bad of [{ dailyLimitKrw: -1 }, { dailyLimitKrw: 1_000_001 }, { dailyLimitKrw: 1.5 }, { dailyLimitKrw: "100" }, { testQuota: "weekly" }, { refundPending: "yes" }, { balanceKrw: 5 }]) {
      await expectAdmin(await g.h.admin("PATCH", `/orgs/${orgId}`, bad), 400, "invalid_parameter");
    }
    assert.equal((await g.h.admin("GET", `/orgs/${orgId}`)).json.dailyLimitKrw, 0, "a refused patch changes nothing");
    await expectAdmin(await g.h.admin("PATCH", "/orgs/org_missing", { dailyLimitKrw: 5 }), 404, "not_found");
    await expectAdmin(await g.h.admin("GET", "/orgs/org_missing"), 404, "not_found");
  });

  test("POST /orgs/{id}/credit adds credit and returns the balance", async () => {
    const orgId = await newOrg();
    const r = await g.h.admin("POST", `/orgs/${orgId}/credit`, { amountKrw: 5000 });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { balanceKrw: 5000 });
    assert.deepEqual((await g.h.admin("POST", `/orgs/${orgId}/credit`, { amountKrw: 1 })).json, { balanceKrw: 5001 });
    for (const bad of [{ amountKrw: 0 }, { amountKrw: -5 }, { amountKrw: 1.5 }, {}, { amountKrw: "5" }]) {
      await expectAdmin(await g.h.admin("POST", `/orgs/${orgId}/credit`, bad), 400, "invalid_parameter");
    }
    await expectAdmin(await g.h.admin("POST", "/orgs/org_missing/credit", { amountKrw: 5 }), 404, "not_found");
    assert.equal((await g.h.admin("GET", `/orgs/${orgId}`)).json.balanceKrw, 5001);
  });
});

describe("apps", () => {
  test("POST /orgs/{id}/apps creates an app, product off unless asked", async () => {
    const orgId = await newOrg();
    const r = await g.h.admin("POST", `/orgs/${orgId}/apps`, { name: "shop" });
    assert.equal(r.status, 201);
    assert.match(r.json.appId, /^app_/);
    assert.equal((await g.h.services.accounts.getApp(r.json.appId))?.productEnabled, false);
    await expectAdmin(await g.h.admin("POST", `/orgs/${orgId}/apps`, {}), 400, "invalid_parameter");
    await expectAdmin(await g.h.admin("POST", `/orgs/${orgId}/apps`, { name: "" }), 400, "invalid_parameter");
    await expectAdmin(await g.h.admin("POST", `/orgs/${orgId}/apps`, { name: "x", productEnabled: "yes" }), 400, "invalid_parameter");
    await expectAdmin(await g.h.admin("POST", "/orgs/org_missing/apps", { name: "x" }), 404, "not_found");
  });

  test("PATCH /apps sets the product switch and limits; null clears a limit", async () => {
    const appId = await newApp(await newOrg(), false);
    const p = await g.h.admin("PATCH", `/apps/${appId}`, { productEnabled: true, dailyLimitKrw: 1000, monthlyLimitKrw: 20_000 });
    assert.equal(p.status, 200);
    assert.deepEqual([p.json.appId, p.json.productEnabled, p.json.dailyLimitKrw, p.json.monthlyLimitKrw], [appId, true, 1000, 20_000]);
    const cleared = await g.h.admin("PATCH", `/apps/${appId}`, { dailyLimitKrw: null, monthlyLimitKrw: null });
    assert.deepEqual([cleared.json.dailyLimitKrw, cleared.json.monthlyLimitKrw], [null, null]);
    for (const bad of [{ dailyLimitKrw: -1 }, { monthlyLimitKrw: 2.5 }, { dailyLimitKrw: 1_000_001 }, { productEnabled: 1 }, { unknown: true }]) {
      await expectAdmin(await g.h.admin("PATCH", `/apps/${appId}`, bad), 400, "invalid_parameter");
    }
    await expectError(await raw("PATCH", `/apps/${appId}`, { body: "{oops" }), 400, "invalid_parameter");
    await expectAdmin(await g.h.admin("PATCH", "/apps/app_missing", { productEnabled: true }), 404, "not_found");
  });
});

describe("keys", () => {
  test("POST /apps/{id}/keys shows the key once; a second key of a kind is a reissue", async () => {
    const appId = await newApp(await newOrg());
    for (const kind of ["test", "live"] as const) {
      const r = await g.h.admin("POST", `/apps/${appId}/keys`, { kind });
      assert.equal(r.status, 201);
      assert.match(r.json.keyId, /^key_/);
      assert.match(r.json.key, new RegExp(`^pd_${kind}_[0-9A-Za-z]{32,}$`));
      assert.equal(r.res.headers.get("cache-control"), "no-store");
      await expectAdmin(await g.h.admin("POST", `/apps/${appId}/keys`, { kind }), 409, "conflict");
    }
    await expectAdmin(await g.h.admin("POST", `/apps/${appId}/keys`, { kind: "prod" }), 400, "invalid_parameter");
    await expectAdmin(await g.h.admin("POST", `/apps/${appId}/keys`, {}), 400, "invalid_parameter");
    await expectAdmin(await g.h.admin("POST", "/apps/app_missing/keys", { kind: "test" }), 404, "not_found");
  });

  test("a live key only for a verified owner", async () => {
    const made = await g.h.services.accounts.createOrgWithOwner(email(), { verified: false });
    assert.ok(made.ok);
    const appId = await newApp(made.orgId);
    const refused = await g.h.admin("POST", `/apps/${appId}/keys`, { kind: "live" });
    const e = expectAdmin(refused, 409, "conflict");
    assert.match(e.title, /verified/);
    assert.equal((await g.h.admin("POST", `/apps/${appId}/keys`, { kind: "test" })).status, 201, "test keys need no verification");
    await g.h.services.accounts.markEmailVerified(made.userId);
    assert.equal((await g.h.admin("POST", `/apps/${appId}/keys`, { kind: "live" })).status, 201, "after verification");
  });

  test("reissue: previousValidUntil is now + 7 days and both keys work until then", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const r = await g.h.admin("POST", `/keys/${c.liveKeyId}/reissue`);
    assert.equal(r.status, 201);
    assert.notEqual(r.json.keyId, c.liveKeyId);
    assert.match(r.json.key, /^pd_live_[0-9A-Za-z]{32,}$/);
    assert.notEqual(r.json.key, c.liveKey);
    assert.equal(Date.parse(r.json.previousValidUntil), g.clock.now() + 7 * DAY);
    assert.equal(r.res.headers.get("cache-control"), "no-store");
    g.clock.advance(7 * DAY - 60_000);
    for (const key of [c.liveKey, r.json.key]) assert.equal((await g.account(key)).status, 200);
    const call = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(call.status, 200, "the old key still processes");
    g.clock.advance(60_000);
    await expectError(await g.account(c.liveKey), 401, "invalid_api_key");
    assert.equal((await g.account(r.json.key)).status, 200);
    // Only the current key can be reissued.
    await expectAdmin(await g.h.admin("POST", `/keys/${c.liveKeyId}/reissue`), 409, "conflict");
    await expectAdmin(await g.h.admin("POST", "/keys/key_missing/reissue"), 404, "not_found");
  });

  test("suspend, unsuspend and delete return the key's view", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const s = await g.h.admin("POST", `/keys/${c.testKeyId}/suspend`);
    assert.equal(s.status, 200);
    assert.deepEqual([s.json.keyId, s.json.appId, s.json.kind, s.json.suspended], [c.testKeyId, c.appId, "test", true]);
    assert.match(s.json.label, /^pd_test_/);
    assert.equal(s.json.key, undefined, "no key text in a view");
    assert.equal((await g.h.admin("POST", `/keys/${c.testKeyId}/suspend`)).status, 200, "suspending twice is fine");
    const u = await g.h.admin("POST", `/keys/${c.testKeyId}/unsuspend`);
    assert.equal(u.json.suspended, false);
    const d = await g.h.admin("DELETE", `/keys/${c.testKeyId}`);
    assert.equal(d.status, 200);
    assert.equal(d.json.keyId, c.testKeyId);
    await expectError(await g.account(c.testKey), 401, "invalid_api_key");
    await expectAdmin(await g.h.admin("POST", `/keys/${c.testKeyId}/suspend`), 404, "not_found");
    for (const path of ["/keys/key_missing/suspend", "/keys/key_missing/unsuspend"]) {
      await expectAdmin(await g.h.admin("POST", path), 404, "not_found");
    }
    await expectAdmin(await g.h.admin("DELETE", "/keys/key_missing"), 404, "not_found");
  });
});

describe("product and requests", () => {
  test("GET /product; PUT /product rejects unknown states without changing anything", async () => {
    const before = await g.h.admin("GET", "/product");
    assert.equal(before.status, 200);
    assert.ok(["available", "discontinued", "maintenance"].includes(before.json.status));
    for (const body of [{ status: "sold_out" }, {}, { status: "available", extra: 1 }]) {
      await expectAdmin(await g.h.admin("PUT", "/product", body), 400, "invalid_parameter");
    }
    await expectError(await raw("PUT", "/product", { body: "status=available" }), 400, "invalid_parameter");
    assert.deepEqual((await g.h.admin("GET", "/product")).json, before.json);
  });

  test("GET /requests/{id} returns the request-log row; unknown IDs are 404", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "small" });
    assert.equal(res.status, 200);
    const id = res.headers.get("x-pd-request-id")!;
    const row = await g.h.admin("GET", `/requests/${id}`);
    assert.equal(row.status, 200);
    assert.deepEqual(
      [row.json.requestId, row.json.orgId, row.json.appId, row.json.keyId, row.json.keyKind, row.json.tier, row.json.status, row.json.errorCode, row.json.chargedKrw, row.json.attempts],
      [id, c.orgId, c.appId, c.liveKeyId, "live", "preview", 200, null, 22, 1],
    );
    assert.equal(row.json.receivedAt, new Date(g.clock.now()).toISOString());
    assert.ok(Number.isInteger(row.json.processingMs));
    await expectAdmin(await g.h.admin("GET", "/requests/req_00000000000000000000000000"), 404, "not_found");
  });
});
