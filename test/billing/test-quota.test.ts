import { test } from "node:test";
import assert from "node:assert/strict";
import { allSettled, describeEachDb, manualClock } from "../db/harness.ts";
import { makeOrg } from "../db/fixtures.ts";
import { createTestQuota, TEST_CALLS_PER_PERIOD } from "../../src/billing/index.ts";

const NOV30_2359 = Date.parse("2026-11-30T14:59:00Z"); // 2026-11-30 23:59 KST
const DEC1_0000 = Date.parse("2026-11-30T15:00:00Z"); // 2026-12-01 00:00 KST
const DAY = 86_400_000;

describeEachDb("test-key quota", (getDb) => {
  const setup = async (start = NOV30_2359) => {
    const clock = manualClock(start);
    const db = getDb();
    const quota = createTestQuota({ db, now: clock.now });
    const { orgId } = await makeOrg(db, clock.now);
    return { clock, quota, orgId, db };
  };

  test("50 calls a month, counting down, then test_quota_exceeded until the 1st KST", async () => {
    const { quota, orgId, clock } = await setup();
    for (let i = 1; i <= TEST_CALLS_PER_PERIOD; i++) {
      const r = await quota.consumeTestCall({ orgId, lifetime: false });
      assert.ok(r.ok);
      assert.equal(r.remaining, TEST_CALLS_PER_PERIOD - i);
      assert.equal(r.period, "2026-11");
    }
    const over = await quota.consumeTestCall({ orgId, lifetime: false });
    assert.equal(over.ok, false);
    if (!over.ok) {
      assert.equal(over.code, "test_quota_exceeded");
      assert.equal(over.retryAfter, 60);
    }
    assert.equal(await quota.testCallsRemaining({ orgId, lifetime: false }), 0);
    clock.set(DEC1_0000 - 1);
    assert.equal((await quota.consumeTestCall({ orgId, lifetime: false })).ok, false);
    clock.set(DEC1_0000);
    assert.equal(await quota.testCallsRemaining({ orgId, lifetime: false }), 50);
    const fresh = await quota.consumeTestCall({ orgId, lifetime: false });
    assert.ok(fresh.ok);
    assert.equal(fresh.remaining, 49);
    assert.equal(fresh.period, "2026-12");
  });

  test("the lifetime quota never resets and has no Retry-After", async () => {
    const { quota, orgId, clock } = await setup();
    for (let i = 0; i < 50; i++) assert.ok((await quota.consumeTestCall({ orgId, lifetime: true })).ok);
    const over = await quota.consumeTestCall({ orgId, lifetime: true });
    assert.equal(over.ok ? "ok" : over.code, "test_quota_exceeded");
    assert.equal(over.ok ? 0 : over.retryAfter, undefined);
    for (const later of [DEC1_0000, DEC1_0000 + 40 * DAY, DEC1_0000 + 400 * DAY]) {
      clock.set(later);
      assert.equal((await quota.consumeTestCall({ orgId, lifetime: true })).ok, false);
      assert.equal(await quota.testCallsRemaining({ orgId, lifetime: true }), 0);
    }
  });

  test("switching an org to the lifetime quota counts the calls it already made", async () => {
    const { quota, orgId, clock } = await setup(NOV30_2359 - 20 * DAY);
    for (let i = 0; i < 30; i++) assert.ok((await quota.consumeTestCall({ orgId, lifetime: false })).ok);
    clock.set(DEC1_0000 + DAY);
    assert.equal(await quota.testCallsRemaining({ orgId, lifetime: false }), 50);
    assert.equal(await quota.testCallsRemaining({ orgId, lifetime: true }), 20);
    let ok = 0;
    for (let i = 0; i < 25; i++) if ((await quota.consumeTestCall({ orgId, lifetime: true })).ok) ok++;
    assert.equal(ok, 20);
  });

  test("concurrent calls never get past 50", async () => {
    const { quota, orgId } = await setup();
    const results = await allSettled(
      Array.from({ length: 80 }, () => quota.consumeTestCall({ orgId, lifetime: false })),
    );
    assert.equal(results.filter((r) => r.ok).length, 50);
    const remaining = results.flatMap((r) => (r.ok ? [r.remaining] : [])).sort((a, b) => a - b);
    assert.deepEqual(remaining, Array.from({ length: 50 }, (_, i) => i));
  });

  test("a refunded call (one that ended in an error) can be used again", async () => {
    const { quota, orgId } = await setup();
    for (let i = 0; i < 50; i++) await quota.consumeTestCall({ orgId, lifetime: false });
    await quota.refundTestCall({ orgId, period: "2026-11" });
    assert.equal(await quota.testCallsRemaining({ orgId, lifetime: false }), 1);
    assert.equal(await quota.testCallsRemaining({ orgId, lifetime: true }), 1);
    assert.ok((await quota.consumeTestCall({ orgId, lifetime: false })).ok);
    assert.equal((await quota.consumeTestCall({ orgId, lifetime: false })).ok, false);
  });

  test("a refund goes to the month the call was counted in, and never below zero", async () => {
    const { quota, orgId, clock } = await setup();
    const taken = await quota.consumeTestCall({ orgId, lifetime: false });
    assert.ok(taken.ok);
    clock.set(DEC1_0000 + 1000); // the call ended after midnight on the 1st
    assert.ok((await quota.consumeTestCall({ orgId, lifetime: false })).ok);
    await quota.refundTestCall({ orgId, period: taken.period });
    assert.equal(await quota.testCallsRemaining({ orgId, lifetime: false }), 49); // December untouched
    await quota.refundTestCall({ orgId, period: "2026-11" });
    await quota.refundTestCall({ orgId, period: "2026-11" });
    const rows = await getDb().query<{ period: string; count: number }>(
      "SELECT period, count FROM test_usage WHERE org_id = $1 ORDER BY period",
      [orgId],
    );
    assert.deepEqual(rows, [
      { period: "2026-11", count: 0 },
      { period: "2026-12", count: 1 },
      { period: "lifetime", count: 0 },
    ]);
  });
});
