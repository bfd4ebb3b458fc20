import { test } from "node:test";
import assert from "node:assert/strict";
import { describeEachDb, manualClock } from "../db/harness.ts";
import { makeOrg, reqId } from "../db/fixtures.ts";
import { createBilling } from "../../src/billing/index.ts";
import { createAccounts } from "../../src/accounts/index.ts";
import { assertLedgerInvariants } from "./invariants.ts";

const KST_2359_30 = Date.parse("2026-11-17T14:59:30Z"); // 2026-11-17 23:59:30 KST
const KST_MIDNIGHT = Date.parse("2026-11-17T15:00:00Z"); // 2026-11-18 00:00:00 KST
const NOV30_2359 = Date.parse("2026-11-30T14:59:00Z"); // 2026-11-30 23:59:00 KST
const DEC1_0000 = Date.parse("2026-11-30T15:00:00Z"); // 2026-12-01 00:00:00 KST

describeEachDb("spending limits", (getDb) => {
  const setup = async (start: number, org: { dailyLimitKrw?: number } = {}) => {
    const clock = manualClock(start);
    const db = getDb();
    const billing = createBilling({ db, now: clock.now, holdTtlMs: 150_000 });
    const accounts = createAccounts({ db, now: clock.now });
    const f = await makeOrg(db, clock.now, { creditKrw: 100_000, ...org });
    /** reserve + capture at the full price; returns the reserve result. */
    const spend = async (amountKrw = 110, appId = f.appId) => {
      const requestId = reqId();
      const r = await billing.reserve({ requestId, orgId: f.orgId, appId, amountKrw });
      if (r.ok) await billing.capture(requestId, amountKrw);
      return r;
    };
    return { db, clock, billing, accounts, spend, ...f };
  };

  test("the org daily limit stops spending until 00:00 KST", async () => {
    const { spend, clock, db, orgId } = await setup(KST_2359_30, { dailyLimitKrw: 220 });
    assert.deepEqual(await spend(), { ok: true });
    assert.deepEqual(await spend(), { ok: true });
    const third = await spend();
    assert.equal(third.ok, false);
    if (!third.ok) {
      assert.equal(third.code, "daily_limit_reached");
      assert.match(third.title ?? "", /organization/i);
      assert.equal(third.retryAfter, 30);
    }
    clock.set(KST_MIDNIGHT - 1);
    assert.equal((await spend()).ok, false);
    clock.set(KST_MIDNIGHT);
    assert.deepEqual(await spend(), { ok: true });
    await assertLedgerInvariants(db, orgId);
  });

  test("a limit of exactly the amount allows it; one won less does not", async () => {
    const { spend, accounts, orgId } = await setup(KST_2359_30, { dailyLimitKrw: 110 });
    assert.deepEqual(await spend(), { ok: true });
    const again = await spend(22);
    assert.equal(again.ok ? "ok" : again.code, "daily_limit_reached");
    await accounts.updateOrg(orgId, { dailyLimitKrw: 131 });
    assert.deepEqual(await spend(21), { ok: true });
  });

  test("a daily limit of 0 allows no paid call", async () => {
    const { spend } = await setup(KST_2359_30, { dailyLimitKrw: 0 });
    const r = await spend(22);
    assert.equal(r.ok ? "ok" : r.code, "daily_limit_reached");
  });

  test("open holds count towards the limit; a release frees it", async () => {
    const { billing, orgId, appId } = await setup(KST_2359_30, { dailyLimitKrw: 110 });
    const first = reqId();
    assert.deepEqual(await billing.reserve({ requestId: first, orgId, appId, amountKrw: 110 }), { ok: true });
    const second = await billing.reserve({ requestId: reqId(), orgId, appId, amountKrw: 110 });
    assert.equal(second.ok ? "ok" : second.code, "daily_limit_reached");
    await billing.release(first);
    assert.deepEqual(await billing.reserve({ requestId: reqId(), orgId, appId, amountKrw: 110 }), { ok: true });
  });

  test("a capture below the reservation gives the difference back to the limit", async () => {
    const { billing, orgId, appId, spend } = await setup(KST_2359_30, { dailyLimitKrw: 132 });
    const r = reqId();
    await billing.reserve({ requestId: r, orgId, appId, amountKrw: 110 });
    await billing.capture(r, 22);
    assert.deepEqual(await billing.spending(orgId, appId), { orgDayKrw: 22, appDayKrw: 22, appMonthKrw: 22 });
    assert.deepEqual(await spend(110), { ok: true });
    assert.equal((await spend(22)).ok, false);
  });

  test("spending counts on the KST day the hold was made, even if captured after midnight", async () => {
    const { billing, clock, orgId, appId, spend, db } = await setup(KST_MIDNIGHT - 1000, { dailyLimitKrw: 110 });
    const r = reqId();
    await billing.reserve({ requestId: r, orgId, appId, amountKrw: 110 });
    clock.set(KST_MIDNIGHT + 5000);
    await billing.capture(r, 110);
    assert.deepEqual(await spend(), { ok: true }); // the new day has its own 110
    await assertLedgerInvariants(db, orgId);
  });

  test("an app daily limit stops that app only, and its title says so", async () => {
    const { spend, accounts, orgId, appId } = await setup(KST_2359_30);
    await accounts.updateApp(appId, { dailyLimitKrw: 110 });
    const other = await accounts.createApp(orgId, { name: "other", productEnabled: true });
    assert.ok(other.ok);
    assert.deepEqual(await spend(), { ok: true });
    const r = await spend();
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.code, "daily_limit_reached");
      assert.match(r.title ?? "", /app/i);
      assert.equal(r.retryAfter, 30);
    }
    assert.deepEqual(await spend(110, other.ok ? other.appId : ""), { ok: true });
    await accounts.updateApp(appId, { dailyLimitKrw: null });
    assert.deepEqual(await spend(), { ok: true });
  });

  test("an app monthly limit holds until the 1st 00:00 KST", async () => {
    const { spend, accounts, appId, clock } = await setup(NOV30_2359);
    await accounts.updateApp(appId, { monthlyLimitKrw: 220 });
    assert.deepEqual(await spend(), { ok: true });
    assert.deepEqual(await spend(), { ok: true });
    const r = await spend();
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.code, "monthly_limit_reached");
      assert.equal(r.retryAfter, 60);
    }
    clock.set(DEC1_0000 - 1);
    assert.equal((await spend()).ok, false);
    clock.set(DEC1_0000);
    assert.deepEqual(await spend(), { ok: true });
  });

  test("the balance is checked before the limits", async () => {
    const clock = manualClock(KST_2359_30);
    const db = getDb();
    const billing = createBilling({ db, now: clock.now, holdTtlMs: 1000 });
    const { orgId, appId } = await makeOrg(db, clock.now, { creditKrw: 100, dailyLimitKrw: 0 });
    const r = await billing.reserve({ requestId: reqId(), orgId, appId, amountKrw: 110 });
    assert.equal(r.ok ? "ok" : r.code, "insufficient_credits");
  });
});
