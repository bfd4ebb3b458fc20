import { test } from "node:test";
import assert from "node:assert/strict";
import { describeEachDb, manualClock } from "../db/harness.ts";
import { uniqueEmail } from "../db/fixtures.ts";
import { createAccounts } from "../../src/accounts/index.ts";

const START = Date.parse("2026-11-17T03:00:00Z");

describeEachDb("accounts", (getDb) => {
  const setup = () => {
    const clock = manualClock(START);
    return { clock, accounts: createAccounts({ db: getDb(), now: clock.now }) };
  };

  test("sign-up creates a user and the org it owns, with the spec's defaults", async () => {
    const { accounts } = setup();
    const email = uniqueEmail();
    const r = await accounts.createOrgWithOwner(email, { verified: true });
    assert.ok(r.ok);
    assert.match(r.orgId, /^org_[0-9A-Za-z]{22}$/);
    assert.match(r.userId, /^usr_[0-9A-Za-z]{22}$/);
    assert.deepEqual(await accounts.getOrg(r.orgId), {
      orgId: r.orgId,
      ownerUserId: r.userId,
      balanceKrw: 0,
      availableKrw: 0,
      dailyLimitKrw: 50_000,
      refundPending: false,
      testQuota: "monthly",
      createdAt: START,
    });
    const user = await accounts.getUser(r.userId);
    assert.deepEqual(user, { userId: r.userId, email, verifiedAt: START, createdAt: START, orgIds: [r.orgId] });
    assert.deepEqual(await accounts.findUserByEmail(email.toUpperCase()), user);
    assert.equal(await accounts.getOrg("org_nope"), null);
  });

  test("an address registers once, whatever its case; junk is not an address", async () => {
    const { accounts } = setup();
    const email = uniqueEmail();
    assert.ok((await accounts.createOrgWithOwner(email, { verified: false })).ok);
    const dup = await accounts.createOrgWithOwner(`  ${email.toUpperCase()} `, { verified: false });
    assert.equal(dup.ok ? "ok" : dup.code, "conflict");
    for (const bad of ["", "no-at-sign", "two@@example.test", "sp ace@example.test"]) {
      const r = await accounts.createOrgWithOwner(bad, { verified: false });
      assert.equal(r.ok ? "ok" : r.code, "invalid_parameter", bad);
    }
  });

  test("e-mail verification is recorded once", async () => {
    const { accounts, clock } = setup();
    const r = await accounts.createOrgWithOwner(uniqueEmail(), { verified: false });
    assert.ok(r.ok);
    assert.equal((await accounts.getUser(r.userId))?.verifiedAt, null);
    clock.advance(1000);
    assert.deepEqual(await accounts.markEmailVerified(r.userId), { ok: true });
    clock.advance(1000);
    await accounts.markEmailVerified(r.userId);
    assert.equal((await accounts.getUser(r.userId))?.verifiedAt, START + 1000);
    const nobody = await accounts.markEmailVerified("usr_nope");
    assert.equal(nobody.ok ? "ok" : nobody.code, "not_found");
  });

  test("the org daily limit accepts 0 to 1,000,000 whole won", async () => {
    const { accounts } = setup();
    const r = await accounts.createOrgWithOwner(uniqueEmail(), { verified: true });
    assert.ok(r.ok);
    for (const ok of [0, 1_000_000, 12_345]) {
      const u = await accounts.updateOrg(r.orgId, { dailyLimitKrw: ok });
      assert.ok(u.ok);
      assert.equal(u.dailyLimitKrw, ok);
    }
    for (const bad of [-1, 1_000_001, 1.5, Number.NaN]) {
      const u = await accounts.updateOrg(r.orgId, { dailyLimitKrw: bad });
      assert.equal(u.ok ? "ok" : u.code, "invalid_parameter", String(bad));
    }
    assert.equal((await accounts.getOrg(r.orgId))?.dailyLimitKrw, 12_345);
    const states = await accounts.updateOrg(r.orgId, { refundPending: true, testQuota: "lifetime" });
    assert.ok(states.ok);
    assert.deepEqual([states.refundPending, states.testQuota], [true, "lifetime"]);
    const missing = await accounts.updateOrg("org_nope", { refundPending: true });
    assert.equal(missing.ok ? "ok" : missing.code, "not_found");
  });

  test("apps start with the product disabled and take optional limits", async () => {
    const { accounts } = setup();
    const org = await accounts.createOrgWithOwner(uniqueEmail(), { verified: true });
    assert.ok(org.ok);
    const app = await accounts.createApp(org.orgId, { name: "  Shop images  " });
    assert.ok(app.ok);
    assert.match(app.appId, /^app_/);
    assert.equal(app.name, "Shop images");
    assert.equal(app.productEnabled, false);
    assert.deepEqual([app.dailyLimitKrw, app.monthlyLimitKrw], [null, null]);

    const u = await accounts.updateApp(app.appId, { productEnabled: true, dailyLimitKrw: 5000, monthlyLimitKrw: 90_000 });
    assert.ok(u.ok);
    assert.deepEqual([u.productEnabled, u.dailyLimitKrw, u.monthlyLimitKrw], [true, 5000, 90_000]);
    const cleared = await accounts.updateApp(app.appId, { dailyLimitKrw: null });
    assert.ok(cleared.ok);
    assert.deepEqual([cleared.dailyLimitKrw, cleared.monthlyLimitKrw], [null, 90_000]);
    for (const patch of [{ dailyLimitKrw: -1 }, { monthlyLimitKrw: 2.5 }, { name: "" }, { name: "x".repeat(101) }]) {
      const bad = await accounts.updateApp(app.appId, patch);
      assert.equal(bad.ok ? "ok" : bad.code, "invalid_parameter", JSON.stringify(patch));
    }
    const { ok: _ok, ...view } = cleared;
    assert.deepEqual(await accounts.getApp(app.appId), view);
    const noOrg = await accounts.createApp("org_nope", { name: "x" });
    assert.equal(noOrg.ok ? "ok" : noOrg.code, "not_found");
  });

  test("deleted apps leave the list and cannot be changed", async () => {
    const { accounts, clock } = setup();
    const org = await accounts.createOrgWithOwner(uniqueEmail(), { verified: true });
    assert.ok(org.ok);
    const a = await accounts.createApp(org.orgId, { name: "a" });
    clock.advance(1); // listed in creation order
    const b = await accounts.createApp(org.orgId, { name: "b", productEnabled: true });
    assert.ok(a.ok && b.ok);
    assert.deepEqual((await accounts.listApps(org.orgId)).map((x) => x.name), ["a", "b"]);
    assert.deepEqual(await accounts.removeApp(a.appId), { ok: true });
    assert.deepEqual((await accounts.listApps(org.orgId)).map((x) => x.name), ["b"]);
    assert.equal((await accounts.getApp(a.appId))?.deletedAt, START + 1);
    const u = await accounts.updateApp(a.appId, { name: "again" });
    assert.equal(u.ok ? "ok" : u.code, "not_found");
  });

  test("product status starts available and follows the operator", async () => {
    const { accounts } = setup();
    assert.equal(await accounts.getProductStatus(), "available");
    assert.deepEqual(await accounts.setProductStatus("maintenance"), { ok: true });
    assert.equal(await accounts.getProductStatus(), "maintenance");
    const bad = await accounts.setProductStatus("sold-out" as never);
    assert.equal(bad.ok ? "ok" : bad.code, "invalid_parameter");
    await accounts.setProductStatus("discontinued");
    assert.equal(await accounts.getProductStatus(), "discontinued");
    await accounts.setProductStatus("available");
  });
});
