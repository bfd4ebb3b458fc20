import { test } from "node:test";
import assert from "node:assert/strict";
import { allSettled, describeEachDb, manualClock } from "../db/harness.ts";
import { makeOrg, reqId } from "../db/fixtures.ts";
import { createBilling, type CaptureResult } from "../../src/billing/index.ts";
import { createAccounts } from "../../src/accounts/index.ts";
import { assertLedgerInvariants } from "./invariants.ts";

const START = Date.parse("2026-11-17T03:00:00Z"); // 12:00 KST
const TTL = 150_000;

/** A capture's money, without the spending counters it also reports (tested on their own below). */
const charge = (r: CaptureResult) => (r.ok ? { ok: r.ok, chargedKrw: r.chargedKrw, balanceKrw: r.balanceKrw } : r);

describeEachDb("ledger", (getDb) => {
  const setup = async (creditKrw: number) => {
    const clock = manualClock(START);
    const db = getDb();
    const billing = createBilling({ db, now: clock.now, holdTtlMs: TTL });
    const f = await makeOrg(db, clock.now, { creditKrw });
    return { db, clock, billing, ...f };
  };

  test("credit adds to the balance and refuses bad amounts", async () => {
    const { billing, orgId, db } = await setup(0);
    assert.deepEqual(await billing.credit(orgId, 1000), { ok: true, balanceKrw: 1000 });
    assert.deepEqual(await billing.credit(orgId, 500, "top-up"), { ok: true, balanceKrw: 1500 });
    for (const bad of [0, -5, 1.5, Number.NaN]) {
      const r = await billing.credit(orgId, bad);
      assert.equal(r.ok ? "ok" : r.code, "invalid_parameter", String(bad));
    }
    const r = await billing.credit("org_nope", 10);
    assert.equal(r.ok ? "ok" : r.code, "not_found");
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 1500, availableKrw: 1500, heldKrw: 0 });
    await assertLedgerInvariants(db, orgId);
  });

  test("reserve then capture charges the captured amount", async () => {
    const { billing, orgId, appId, db } = await setup(1000);
    const requestId = reqId();
    assert.deepEqual(await billing.reserve({ requestId, orgId, appId, amountKrw: 110 }), { ok: true });
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 1000, availableKrw: 890, heldKrw: 110 });
    assert.deepEqual(charge(await billing.capture(requestId, 110)), { ok: true, chargedKrw: 110, balanceKrw: 890 });
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 890, availableKrw: 890, heldKrw: 0 });
    await assertLedgerInvariants(db, orgId);
  });

  test("reserve is idempotent by request ID", async () => {
    const { billing, orgId, appId, db } = await setup(1000);
    const requestId = reqId();
    const hold = { requestId, orgId, appId, amountKrw: 110 };
    assert.deepEqual(await billing.reserve(hold), { ok: true });
    assert.deepEqual(await billing.reserve(hold), { ok: true });
    const again = await allSettled(Array.from({ length: 10 }, () => billing.reserve(hold)));
    assert.ok(again.every((r) => r.ok));
    assert.equal((await billing.balances(orgId))?.heldKrw, 110);
    const rows = await db.query("SELECT 1 FROM holds WHERE request_id = $1", [requestId]);
    assert.equal(rows.length, 1);
    // Same ID, different reservation: a bug upstream, refused.
    const other = await billing.reserve({ ...hold, amountKrw: 22 });
    assert.equal(other.ok ? "ok" : other.code, "conflict");
    await assertLedgerInvariants(db, orgId);
  });

  test("capturing twice charges once and answers with the same numbers", async () => {
    const { billing, orgId, appId, db } = await setup(1000);
    const a = reqId();
    const b = reqId();
    await billing.reserve({ requestId: a, orgId, appId, amountKrw: 110 });
    await billing.reserve({ requestId: b, orgId, appId, amountKrw: 110 });
    const first = charge(await billing.capture(a, 110));
    assert.deepEqual(first, { ok: true, chargedKrw: 110, balanceKrw: 890 });
    await billing.capture(b, 110); // the balance moves on
    assert.deepEqual(charge(await billing.capture(a, 110)), first);
    assert.deepEqual(charge(await billing.capture(a, 22)), first);
    assert.equal((await billing.balances(orgId))?.balanceKrw, 780);
    const caps = await db.query("SELECT 1 FROM ledger_entries WHERE request_id = $1", [a]);
    assert.equal(caps.length, 1);
    await assertLedgerInvariants(db, orgId);
  });

  test("capture never charges more than was reserved", async () => {
    const { billing, orgId, appId, db } = await setup(1000);
    const small = reqId();
    await billing.reserve({ requestId: small, orgId, appId, amountKrw: 22 });
    assert.deepEqual(charge(await billing.capture(small, 110)), { ok: true, chargedKrw: 22, balanceKrw: 978 });
    const big = reqId();
    await billing.reserve({ requestId: big, orgId, appId, amountKrw: 110 });
    assert.deepEqual(charge(await billing.capture(big, 22)), { ok: true, chargedKrw: 22, balanceKrw: 956 });
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 956, availableKrw: 956, heldKrw: 0 });
    await assertLedgerInvariants(db, orgId);
  });

  test("a capture reports the spending counters after it, for the KST day and month of its moment", async () => {
    const { billing, orgId, appId, db, clock } = await setup(10_000);
    const other = await makeOrg(db, clock.now, { creditKrw: 10_000 });
    const open = reqId();
    await billing.reserve({ requestId: open, orgId, appId, amountKrw: 110 }); // stays open: it counts
    await billing.reserve({ requestId: reqId(), orgId: other.orgId, appId: other.appId, amountKrw: 110 }); // another org's: it does not
    const a = reqId();
    await billing.reserve({ requestId: a, orgId, appId, amountKrw: 110 });
    const first = await billing.capture(a, 22);
    assert.ok(first.ok);
    // 110 open + 22 charged (the 88 not charged came back to the counters).
    assert.deepEqual(first.spendAfter, { at: START, orgDayKrw: 132, appDayKrw: 132, appMonthKrw: 132 });
    await billing.release(open);
    // Asked again: the first capture's money, the counters as they are now.
    const again = await billing.capture(a, 22);
    assert.ok(again.ok);
    assert.deepEqual([again.chargedKrw, again.balanceKrw], [first.chargedKrw, first.balanceKrw]);
    assert.deepEqual(again.spendAfter, { at: START, orgDayKrw: 22, appDayKrw: 22, appMonthKrw: 22 });
    // The next KST day (00:00 KST = 15:00 UTC): a fresh day's counters, the month's still counting.
    clock.set(Date.parse("2026-11-17T15:00:00Z"));
    const b = reqId();
    await billing.reserve({ requestId: b, orgId, appId, amountKrw: 110 });
    const next = await billing.capture(b, 110);
    assert.ok(next.ok);
    assert.deepEqual(next.spendAfter, { at: clock.now(), orgDayKrw: 110, appDayKrw: 110, appMonthKrw: 132 });
    // A refused capture reports nothing.
    await billing.reserve({ requestId: open, orgId, appId, amountKrw: 110 }); // released: stays released
    assert.equal((await billing.capture(open, 22)).ok, false);
    await assertLedgerInvariants(db, orgId);
  });

  test("release gives the hold back, is idempotent, and is refused after capture", async () => {
    const { billing, orgId, appId, db } = await setup(1000);
    const r1 = reqId();
    await billing.reserve({ requestId: r1, orgId, appId, amountKrw: 110 });
    assert.deepEqual(await billing.release(r1), { ok: true, released: true });
    assert.deepEqual(await billing.release(r1), { ok: true, released: false });
    assert.deepEqual(await billing.release(reqId()), { ok: true, released: false });
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 1000, availableKrw: 1000, heldKrw: 0 });
    // A released request cannot be charged or re-reserved.
    const cap = await billing.capture(r1, 110);
    assert.equal(cap.ok ? "ok" : cap.code, "conflict");
    const res = await billing.reserve({ requestId: r1, orgId, appId, amountKrw: 110 });
    assert.equal(res.ok ? "ok" : res.code, "conflict");

    const r2 = reqId();
    await billing.reserve({ requestId: r2, orgId, appId, amountKrw: 110 });
    await billing.capture(r2, 110);
    const rel = await billing.release(r2);
    assert.equal(rel.ok ? "ok" : rel.code, "conflict");
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 890, availableKrw: 890, heldKrw: 0 });
    await assertLedgerInvariants(db, orgId);
  });

  test("capturing an unknown request is refused", async () => {
    const { billing } = await setup(0);
    const r = await billing.capture(reqId(), 110);
    assert.equal(r.ok ? "ok" : r.code, "not_found");
  });

  test("reserve needs available credit, counting open holds", async () => {
    const { billing, orgId, appId, db } = await setup(250);
    const hold = (amountKrw: number) => billing.reserve({ requestId: reqId(), orgId, appId, amountKrw });
    assert.deepEqual(await hold(110), { ok: true });
    assert.deepEqual(await hold(110), { ok: true });
    const third = await hold(110);
    assert.equal(third.ok ? "ok" : third.code, "insufficient_credits");
    assert.deepEqual(await hold(22), { ok: true }); // 250 - 220 = 30 left
    const fifth = await hold(22);
    assert.equal(fifth.ok ? "ok" : fifth.code, "insufficient_credits");
    await assertLedgerInvariants(db, orgId);
  });

  test("an organization with a refund in progress cannot reserve", async () => {
    const { billing, orgId, appId, db, clock } = await setup(1000);
    await createAccounts({ db, now: clock.now }).updateOrg(orgId, { refundPending: true });
    const r = await billing.reserve({ requestId: reqId(), orgId, appId, amountKrw: 22 });
    assert.equal(r.ok ? "ok" : r.code, "refund_pending");
  });

  test("a reserve for an app of another organization is refused", async () => {
    const { billing, orgId, db, clock } = await setup(1000);
    const other = await makeOrg(db, clock.now, { creditKrw: 1000 });
    const r = await billing.reserve({ requestId: reqId(), orgId, appId: other.appId, amountKrw: 22 });
    assert.equal(r.ok ? "ok" : r.code, "not_found");
    assert.equal((await billing.balances(orgId))?.heldKrw, 0);
  });

  test("the sweeper releases holds past their expiry and only those", async () => {
    const { billing, orgId, appId, db, clock } = await setup(1000);
    const old = reqId();
    await billing.reserve({ requestId: old, orgId, appId, amountKrw: 110 });
    clock.advance(TTL / 2);
    const young = reqId();
    await billing.reserve({ requestId: young, orgId, appId, amountKrw: 110 });
    const captured = reqId();
    await billing.reserve({ requestId: captured, orgId, appId, amountKrw: 22 });
    await billing.capture(captured, 22);

    // Other tests' holds share this database, so look at these three, not at counts.
    const state = async (id: string) =>
      (await db.query<{ state: string }>("SELECT state FROM holds WHERE request_id = $1", [id]))[0].state;
    clock.advance(TTL / 2 - 1);
    await billing.sweepExpired();
    assert.deepEqual([await state(old), await state(young), await state(captured)], ["open", "open", "captured"]);
    clock.advance(1);
    assert.ok((await billing.sweepExpired()) >= 1);
    assert.deepEqual([await state(old), await state(young), await state(captured)], ["released", "open", "captured"]);
    assert.equal(await billing.sweepExpired(), 0);
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 978, availableKrw: 868, heldKrw: 110 });
    // The gateway coming back late cannot charge a swept hold.
    const late = await billing.capture(old, 110);
    assert.equal(late.ok ? "ok" : late.code, "conflict");
    clock.advance(TTL);
    assert.ok((await billing.sweepExpired()) >= 1);
    assert.equal(await state(young), "released");
    assert.equal((await billing.balances(orgId))?.heldKrw, 0);
    await assertLedgerInvariants(db, orgId);
  });

  test("refunds and adjustments move the balance but never below what is held", async () => {
    const { billing, orgId, appId, db } = await setup(1000);
    await billing.reserve({ requestId: reqId(), orgId, appId, amountKrw: 110 });
    const tooMuch = await billing.adjust(orgId, "refund", -900);
    assert.equal(tooMuch.ok ? "ok" : tooMuch.code, "conflict");
    assert.deepEqual(await billing.adjust(orgId, "refund", -890, "refund #1"), { ok: true, balanceKrw: 110 });
    assert.deepEqual(await billing.adjust(orgId, "adjust", 40), { ok: true, balanceKrw: 150 });
    const wrongSign = await billing.adjust(orgId, "refund", 10);
    assert.equal(wrongSign.ok ? "ok" : wrongSign.code, "invalid_parameter");
    await assertLedgerInvariants(db, orgId);
  });
});

test("reserve refuses a non-positive or fractional amount loudly (a caller bug)", async () => {
  const billing = createBilling({
    db: { kind: "pglite", query: async () => [], transaction: async (fn) => fn(null as never), exec: async () => {}, close: async () => {} },
    now: () => 0,
    holdTtlMs: 1,
  });
  await assert.rejects(billing.reserve({ requestId: "r", orgId: "o", appId: "a", amountKrw: 0 }), RangeError);
  await assert.rejects(billing.reserve({ requestId: "r", orgId: "o", appId: "a", amountKrw: 21.5 }), RangeError);
});
