import { test } from "node:test";
import assert from "node:assert/strict";
import { allSettled, describeEachDb, manualClock } from "../db/harness.ts";
import { makeOrg, reqId } from "../db/fixtures.ts";
import { createBilling } from "../../src/billing/index.ts";
import { assertLedgerInvariants } from "./invariants.ts";

const START = Date.parse("2026-11-17T03:00:00Z");

describeEachDb("ledger under concurrency", (getDb) => {
  test("200 concurrent runs on a balance that covers 50: exactly 50 are charged", async () => {
    const clock = manualClock(START);
    const db = getDb();
    const billing = createBilling({ db, now: clock.now, holdTtlMs: 150_000 });
    const { orgId, appId } = await makeOrg(db, clock.now, { creditKrw: 50 * 110 });

    const outcomes = await allSettled(
      Array.from({ length: 200 }, async () => {
        const requestId = reqId();
        const r = await billing.reserve({ requestId, orgId, appId, amountKrw: 110 });
        if (!r.ok) return r.code;
        const c = await billing.capture(requestId, 110);
        assert.ok(c.ok);
        return "charged";
      }),
    );
    const count = (s: string) => outcomes.filter((o) => o === s).length;
    assert.equal(count("charged"), 50);
    assert.equal(count("insufficient_credits"), 150);
    assert.deepEqual(await billing.balances(orgId), { balanceKrw: 0, availableKrw: 0, heldKrw: 0 });
    const open = await db.query("SELECT 1 FROM holds WHERE org_id = $1 AND state = 'open'", [orgId]);
    assert.equal(open.length, 0);
    await assertLedgerInvariants(db, orgId);
  });

  test("concurrent runs that capture, release, capture twice and resend keep every invariant", async () => {
    const clock = manualClock(START);
    const db = getDb();
    const billing = createBilling({ db, now: clock.now, holdTtlMs: 150_000 });
    const { orgId, appId } = await makeOrg(db, clock.now, { creditKrw: 30 * 110 });

    const outcomes = await allSettled(
      Array.from({ length: 120 }, async (_, i) => {
        const requestId = reqId();
        const hold = { requestId, orgId, appId, amountKrw: i % 3 === 0 ? 22 : 110 };
        // Every fourth request is "resent" by the gateway at the same time.
        const tries = await allSettled(i % 4 === 0 ? [billing.reserve(hold), billing.reserve(hold)] : [billing.reserve(hold)]);
        // The two copies may disagree: one can be refused for credit and the other,
        // a moment later, find credit another request just released. Either way the
        // request holds at most one reservation, which it must settle.
        if (!tries.some((t) => t.ok)) return "refused";
        if (i % 5 === 0) {
          const r = await billing.release(requestId);
          assert.ok(r.ok);
          return "released";
        }
        // Some captures race with a release of the same request: exactly one wins.
        const [cap, rel, cap2] = await Promise.all([
          billing.capture(requestId, 110),
          i % 7 === 0 ? billing.release(requestId) : Promise.resolve(null),
          billing.capture(requestId, 110),
        ]);
        if (cap.ok) {
          // The same charge; the spending counters each saw are of their own moment.
          assert.deepEqual(cap2.ok && [cap2.chargedKrw, cap2.balanceKrw], [cap.chargedKrw, cap.balanceKrw]);
          assert.ok(rel === null || !rel.ok);
          return "charged";
        }
        assert.ok(rel?.ok);
        return "released";
      }),
    );
    assert.ok(outcomes.includes("charged") && outcomes.includes("refused"));
    const open = await db.query("SELECT 1 FROM holds WHERE org_id = $1 AND state = 'open'", [orgId]);
    assert.equal(open.length, 0);
    const [charged] = await db.query<{ krw: number | null }>(
      "SELECT sum(captured_krw) AS krw FROM holds WHERE org_id = $1",
      [orgId],
    );
    assert.equal((await billing.balances(orgId))?.balanceKrw, 30 * 110 - (charged.krw ?? 0));
    await assertLedgerInvariants(db, orgId);
  });

  test("holds of many orgs at once stay separate", async () => {
    const clock = manualClock(START);
    const db = getDb();
    const billing = createBilling({ db, now: clock.now, holdTtlMs: 150_000 });
    const orgs = await allSettled(Array.from({ length: 5 }, () => makeOrg(db, clock.now, { creditKrw: 10 * 22 })));
    const results = await allSettled(
      orgs.flatMap((o) =>
        Array.from({ length: 15 }, async () => {
          const requestId = reqId();
          const r = await billing.reserve({ requestId, orgId: o.orgId, appId: o.appId, amountKrw: 22 });
          if (r.ok) await billing.capture(requestId, 22);
          return { orgId: o.orgId, ok: r.ok };
        }),
      ),
    );
    for (const o of orgs) {
      assert.equal(results.filter((r) => r.orgId === o.orgId && r.ok).length, 10);
      await assertLedgerInvariants(db, o.orgId);
    }
  });
});
