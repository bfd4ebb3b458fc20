// Limits that reset on the Korean calendar, through HTTP with an injected clock:
// org and app daily limits at 00:00 KST (15:00 UTC), the app monthly limit and the test
// key's monthly quota on the 1st at 00:00 KST, with Retry-After counting the seconds to
// that moment. The service-level versions are in test/billing/spend-limits.test.ts
// and test-quota.test.ts; these add the gateway (429 codes, headers, free errors).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Engine } from "../../src/engine/pipeline/engine.ts";
import { manualClock } from "../db/harness.ts";
import { fixture, makeHarness, type Harness } from "../support/harness.ts";
import { assertLogMatchesLedger, assertSettled } from "../support/money-checks.ts";
import { globalBaseline, heldPermits, orgLiveKey } from "../support/permits.ts";
import { outcomeOf, sendRemovebg, type Outcome } from "../support/removebg-request.ts";
import { stubInlineEngine } from "../support/scripted-engine.ts";
import { openStack, STACKS, type OpenedStack } from "../support/stacks.ts";

const IMAGE = fixture("images/orient-upright.png");
const PREVIEW = 22;
const CREDIT = 100_000;
const KST = (local: string) => Date.parse(`${local}+09:00`);

for (const stack of STACKS) {
  describe(`limits crossing KST day and month boundaries [${stack.name}]`, { skip: stack.skip, timeout: 120_000 }, () => {
    let opened: OpenedStack | undefined;
    let h: Harness;
    // Only ever moved forward, as a clock should be.
    const clock = manualClock(KST("2026-03-10T12:00:00"));
    /** Runs inside each product call: lets a test move the clock while a request is in flight. */
    let duringProduct: (() => void) | undefined;
    const orgs: string[] = [];
    let globalLeaked: () => Promise<number>;

    before(async () => {
      opened = await openStack(stack, 13);
      const inner = await stubInlineEngine();
      const engine: Engine = {
        ...inner,
        run: async (job) => {
          duringProduct?.();
          return inner.run(job);
        },
      };
      h = await makeHarness({ embedded: opened.embedded, env: { ...opened.env, LOG_LEVEL: "warn" }, now: clock.now, engine });
      globalLeaked = await globalBaseline(h.services.limiter, h.config.GLOBAL_CONCURRENCY);
    });
    after(async () => {
      await h?.close();
      await opened?.close();
    });

    const call = (key: string) => sendRemovebg((p, i) => h.app.request(p, i), key, { image_file: IMAGE, size: "preview" }).then(outcomeOf);
    const customer = async () => {
      const c = await h.customer({ creditKrw: CREDIT });
      orgs.push(c.orgId);
      return c;
    };
    const patch = async (path: string, body: unknown) => {
      const r = await h.admin("PATCH", path, body);
      assert.equal(r.status, 200, JSON.stringify(r.json));
    };
    function assertRefused(o: Outcome, code: string, retryAfterS: number) {
      assert.deepEqual([o.status, o.code, o.retryAfter, o.chargedKrw], [429, code, String(retryAfterS), undefined]);
    }

    test("org daily limit: 429 until 00:00 KST, then spending resumes", async () => {
      clock.set(KST("2026-03-10T23:59:00"));
      const c = await customer();
      await patch(`/orgs/${c.orgId}`, { dailyLimitKrw: 2 * PREVIEW });
      assert.equal((await call(c.liveKey)).status, 200);
      assert.equal((await call(c.liveKey)).status, 200);
      assertRefused(await call(c.liveKey), "daily_limit_reached", 60);
      clock.set(KST("2026-03-10T23:59:59.400"));
      assertRefused(await call(c.liveKey), "daily_limit_reached", 1);
      clock.set(KST("2026-03-11T00:00:00")); // 2026-03-10T15:00:00Z
      const next = await call(c.liveKey);
      assert.deepEqual([next.status, next.chargedKrw, next.balanceKrw], [200, PREVIEW, CREDIT - 3 * PREVIEW]);
      const s = await assertSettled(h.services.db, c.orgId);
      assert.equal(s.capturedKrw, 3 * PREVIEW, "the refused calls were free");
      const rows = await assertLogMatchesLedger(h.services.db, c.orgId);
      assert.equal(rows.filter((r) => r.error_code === "daily_limit_reached").length, 2);
    });

    test("a call in flight across midnight counts on the day it was reserved", async () => {
      clock.set(KST("2026-03-11T23:59:59"));
      const c = await customer();
      await patch(`/orgs/${c.orgId}`, { dailyLimitKrw: 2 * PREVIEW });
      assert.equal((await call(c.liveKey)).status, 200);
      duringProduct = () => clock.set(KST("2026-03-12T00:00:01")); // the product takes 2 s of clock
      try {
        assert.equal((await call(c.liveKey)).status, 200);
      } finally {
        duringProduct = undefined;
      }
      // The new day starts empty: both of its 44 KRW are available.
      assert.equal((await call(c.liveKey)).status, 200);
      assert.equal((await call(c.liveKey)).status, 200);
      assertRefused(await call(c.liveKey), "daily_limit_reached", 86_399);
      const days = await h.services.db.query<{ period: string; krw: number }>(
        "SELECT period, krw FROM spend_counters WHERE scope_id = $1 ORDER BY period",
        [c.orgId],
      );
      assert.deepEqual(days, [{ period: "2026-03-11", krw: 44 }, { period: "2026-03-12", krw: 44 }]);
      await assertSettled(h.services.db, c.orgId);
    });

    test("app daily limit: 429 until 00:00 KST", async () => {
      clock.set(KST("2026-03-12T23:59:30"));
      const c = await customer();
      await patch(`/apps/${c.appId}`, { dailyLimitKrw: PREVIEW });
      assert.equal((await call(c.liveKey)).status, 200);
      const refused = await call(c.liveKey);
      assertRefused(refused, "daily_limit_reached", 30);
      clock.set(KST("2026-03-13T00:00:00"));
      assert.equal((await call(c.liveKey)).status, 200);
      await assertSettled(h.services.db, c.orgId);
    });

    test("app monthly limit: 429 across days until the 1st 00:00 KST, also over the new year", async () => {
      clock.set(KST("2026-12-15T10:00:00"));
      const c = await customer();
      await patch(`/apps/${c.appId}`, { monthlyLimitKrw: 2 * PREVIEW });
      assert.equal((await call(c.liveKey)).status, 200);
      assert.equal((await call(c.liveKey)).status, 200);
      const toJan1 = (KST("2027-01-01T00:00:00") - KST("2026-12-15T10:00:00")) / 1000;
      assertRefused(await call(c.liveKey), "monthly_limit_reached", toJan1);
      // A new day is not a new month.
      clock.set(KST("2026-12-31T23:59:50"));
      assertRefused(await call(c.liveKey), "monthly_limit_reached", 10);
      clock.set(KST("2027-01-01T00:00:00")); // 2026-12-31T15:00:00Z
      assert.equal((await call(c.liveKey)).status, 200);
      assert.equal((await call(c.liveKey)).status, 200);
      assert.equal((await call(c.liveKey)).status, 429);
      const s = await assertSettled(h.services.db, c.orgId);
      assert.equal(s.capturedKrw, 4 * PREVIEW);
    });

    test("test key: 50 calls a month, reset on the 1st 00:00 KST; a reduced org has no reset", async () => {
      const start = KST("2027-02-28T23:50:00"); // 2027 is not a leap year
      clock.set(start);
      const c = await customer();
      // 45 of the month's calls were made earlier (the per-minute limit of 10 would make
      // 50 real calls a matter of minutes on the Redis limiter, which keeps server time).
      await h.services.db.query("INSERT INTO test_usage (org_id, period, count) VALUES ($1, '2027-02', 45), ($1, 'lifetime', 45)", [c.orgId]);
      const remaining: (string | undefined)[] = [];
      for (let i = 0; i < 5; i++) {
        const o = await call(c.testKey);
        assert.equal(o.status, 200);
        remaining.push(o.testRemaining);
      }
      assert.deepEqual(remaining, ["4", "3", "2", "1", "0"]);
      const used = await call(c.testKey);
      assertRefused({ ...used, testRemaining: undefined }, "test_quota_exceeded", 10 * 60);
      assert.equal(used.testRemaining, "0");
      clock.set(KST("2027-03-01T00:00:00")); // 2027-02-28T15:00:00Z
      const fresh = await call(c.testKey);
      assert.deepEqual([fresh.status, fresh.testRemaining, fresh.chargedKrw], [200, "49", undefined]);

      // The operator reduced this org to 50 calls for life: the 1st brings nothing back.
      const r = await customer();
      await patch(`/orgs/${r.orgId}`, { testQuota: "lifetime" });
      await h.services.db.query("INSERT INTO test_usage (org_id, period, count) VALUES ($1, 'lifetime', 50)", [r.orgId]);
      const life = await call(r.testKey);
      assert.deepEqual([life.status, life.code], [429, "test_quota_exceeded"]);
      clock.set(KST("2027-04-01T00:00:00"));
      assert.deepEqual([(await call(r.testKey)).status], [429]);
      assert.equal((await assertSettled(h.services.db, c.orgId)).balanceKrw, CREDIT, "test calls are never charged");
    });

    test("no permit is left behind by any of the calls above", async () => {
      for (const orgId of orgs) assert.equal(await heldPermits(h.services.limiter, orgLiveKey(orgId), 2), 0, orgId);
      assert.equal(await globalLeaked(), 0);
      const c = await customer();
      const both = await Promise.all([call(c.liveKey), call(c.liveKey)]);
      assert.deepEqual(both.map((o) => o.status), [200, 200]);
    });
  });
}
