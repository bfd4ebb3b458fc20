// 200 concurrent paid calls of one organization through the whole HTTP stack, with the
// org and global concurrency caps raised by config so only the money decides. The
// service-level version (reserve → capture/release straight on the ledger) is
// test/billing/concurrency.test.ts; this one adds the gateway: permits, the hold
// around the product call, capture by output pixels, release on failure, the
// response headers and the request-log rows.
//
// Exact counts hold when no store call times out. On a machine loaded far enough that
// one does (a statement without an answer for 6 s makes the pg adapter cut short every
// call waiting on the pool, src/db/postgres-db.ts), those calls get 503 with
// Retry-After, which the spec allows; what must still hold then is what the spec
// promises about money: nothing charged twice or for an error, no hold or permit left
// once the in-doubt reserves are given back (test/money/reserve-reply-lost.test.ts), and
// all the credit not charged spendable again.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, makeHarness, type Harness } from "../support/harness.ts";
import { assertLogMatchesLedger, assertSettled, ledgerSummary } from "../support/money-checks.ts";
import { globalBaseline, heldPermits, orgLiveKey } from "../support/permits.ts";
import { outcomeOf, sendRemovebg, tally, type Outcome } from "../support/removebg-request.ts";
import { scriptedEngine, stubInlineEngine, type ScriptedEngine } from "../support/scripted-engine.ts";
import { openStack, STACKS, type OpenedStack } from "../support/stacks.ts";

const N = 200;
const PRICE = 22; // preview tier: reserved 22, captured 22
const COVERED = 50;
const CAP = 1000;
const IMAGE = fixture("images/orient-upright.png"); // 64×48: cheap to process

for (const stack of STACKS) {
  describe(`${N} concurrent paid calls through HTTP [${stack.name}]`, { skip: stack.skip, timeout: 180_000 }, () => {
    let opened: OpenedStack | undefined;
    let h: Harness;
    let engine: ScriptedEngine;
    let globalLeaked: () => Promise<number>;
    const sleeps: number[] = [];

    before(async () => {
      opened = await openStack(stack, 10);
      engine = scriptedEngine(await stubInlineEngine());
      h = await makeHarness({
        embedded: opened.embedded,
        engine,
        // A resend would show up here; none of these calls may be resent.
        sleep: async (ms) => void sleeps.push(ms),
        env: {
          ...opened.env,
          ORG_LIVE_CONCURRENCY: String(CAP),
          GLOBAL_CONCURRENCY: String(CAP),
          // The product's own queues must not turn the crowd away either.
          KEY_QUEUE_MAX: String(CAP),
          QUEUE_MAX: String(CAP),
          POOL_SIZE: "64",
          LOG_LEVEL: "warn",
        },
      });
      globalLeaked = await globalBaseline(h.services.limiter, CAP);
    });
    after(async () => {
      await h?.close();
      await opened?.close();
    });

    const call = (key: string) => sendRemovebg((p, i) => h.app.request(p, i), key, { image_file: IMAGE, size: "preview" }).then(outcomeOf);

    /** 503s from a store call that timed out under load (see the top of this file). */
    const storeAway = (outcomes: readonly Outcome[]) => outcomes.filter((o) => o.status === 503 && o.code === "service_unavailable");

    /** Lets the reconciler give back the holds of reserves whose outcome was unknown. */
    async function settleInDoubt() {
      for (let i = 0; i < 30 && (await h.services.reconciler.runOnce()) > 0; i++) await new Promise((r) => setTimeout(r, 500));
      assert.equal(h.services.reconciler.pending(), 0, "every in-doubt hold given back");
    }

    async function assertNoPermitsLeft(orgId: string) {
      assert.equal(await heldPermits(h.services.limiter, orgLiveKey(orgId), CAP), 0, "org permits all released");
      assert.equal(await globalLeaked(), 0, "global permits all released");
    }

    test(`a balance covering ${COVERED}: exactly ${COVERED} are charged, the rest get 402`, async () => {
      engine.reset();
      sleeps.length = 0;
      const c = await h.customer({ creditKrw: COVERED * PRICE });
      const outcomes = await Promise.all(Array.from({ length: N }, () => call(c.liveKey)));

      const away = storeAway(outcomes);
      const ok = outcomes.filter((o) => o.status === 200);
      if (away.length === 0) {
        assert.deepEqual(tally(outcomes), { "200": COVERED, "402 insufficient_credits": N - COVERED });
        assert.deepEqual(sleeps, []);
      } else {
        // A store call timed out: those calls were told to come back, none was charged.
        const t = tally(outcomes);
        assert.deepEqual(Object.keys(t).filter((k) => k !== "200" && k !== "402 insufficient_credits" && k !== "503 service_unavailable"), []);
        assert.ok(ok.length <= COVERED, `${ok.length} 200s for a balance covering ${COVERED}`);
        assert.ok(away.every((o) => o.retryAfter !== undefined), "every 503 carries Retry-After");
      }
      assert.ok(ok.every((o) => o.chargedKrw === PRICE));
      // Each capture saw the balance the previous ones left: distinct balances down from 1078 (to 0 when all 50 ran).
      assert.deepEqual(
        ok.map((o) => o.balanceKrw).sort((a, b) => a! - b!),
        Array.from({ length: ok.length }, (_, i) => (COVERED - ok.length + i) * PRICE),
      );
      assert.ok(outcomes.filter((o) => o.status !== 200).every((o) => o.chargedKrw === undefined));

      await settleInDoubt();
      const s = await assertSettled(h.services.db, c.orgId);
      assert.equal(s.balanceKrw, (COVERED - ok.length) * PRICE);
      assert.equal(s.captures, ok.length);
      assert.equal(s.capturedKrw, ok.length * PRICE);
      const rows = await assertLogMatchesLedger(h.services.db, c.orgId);
      assert.equal(rows.filter((r) => r.charged_krw > 0).length, ok.length);
      if (away.length === 0) {
        assert.equal(rows.length, N, "one log row per request");
        assert.equal(rows.filter((r) => r.status === 402 && r.error_code === "insufficient_credits").length, N - COVERED);
        assert.deepEqual(new Set(rows.map((r) => r.request_id)), new Set(outcomes.map((o) => o.requestId)));
      }
      await assertNoPermitsLeft(c.orgId);

      // Nothing leaked: after a top-up the rest of the credit goes through, one call at a time.
      await h.admin("POST", `/orgs/${c.orgId}/credit`, { amountKrw: PRICE });
      for (let left = COVERED - ok.length; left >= 0; left--) {
        const fresh = await call(c.liveKey);
        assert.equal(fresh.status, 200);
        assert.equal(fresh.balanceKrw, left * PRICE);
      }
    });

    test("failed products among them are released, never charged, and the money is spendable again", async () => {
      sleeps.length = 0;
      const c = await h.customer({ creditKrw: COVERED * PRICE });
      // Every job waits at the gate until each of the 200 requests has either reached
      // the product or been answered, so exactly the 50 that got a hold run; every
      // fifth of those fails after processing began, as a dying worker would.
      const outcomes: Outcome[] = [];
      let answeredWhileClosed = 0;
      let isOpen = false;
      const open = () => {
        isOpen = true;
        engine.open();
      };
      const maybeOpen = () => {
        if (!isOpen && engine.entered() + answeredWhileClosed === N) open();
      };
      engine.reset({ hold: true, fail: (i) => i % 5 === 4 }, maybeOpen);
      const safety = setTimeout(open, 60_000); // never hang the suite; the counts below would then fail
      try {
        await Promise.all(
          Array.from({ length: N }, async () => {
            const o = await call(c.liveKey);
            outcomes.push(o);
            if (!isOpen) {
              answeredWhileClosed++;
              maybeOpen();
            }
          }),
        );
      } finally {
        clearTimeout(safety);
      }

      const away = storeAway(outcomes);
      const failed = engine.failed();
      const charged = outcomes.filter((o) => o.status === 200).length;
      if (away.length === 0) {
        assert.equal(engine.entered(), COVERED, "exactly the covered requests reached the product");
        assert.equal(failed, COVERED / 5);
        assert.deepEqual(tally(outcomes), {
          "200": COVERED - failed,
          "402 insufficient_credits": N - COVERED,
          "500 inference_failed": failed,
        });
        assert.deepEqual(sleeps, [], "inference_failed is not resent");
      } else {
        // A store call timed out (top of this file): fewer reached the product, none was charged twice.
        assert.ok(engine.entered() <= COVERED);
        assert.equal(tally(outcomes)["500 inference_failed"] ?? 0, failed);
        assert.ok(charged <= engine.entered() - failed);
      }

      await settleInDoubt();
      const s = await assertSettled(h.services.db, c.orgId);
      assert.equal(s.captures, charged);
      if (away.length === 0) assert.equal(s.releasedHolds, failed);
      assert.equal(s.balanceKrw, (COVERED - charged) * PRICE);
      const rows = await assertLogMatchesLedger(h.services.db, c.orgId);
      const failedRows = rows.filter((r) => r.error_code === "inference_failed");
      if (away.length === 0) assert.equal(failedRows.length, failed);
      assert.ok(failedRows.every((r) => r.status === 500 && r.charged_krw === 0 && r.attempts === 1));
      assert.equal(rows.filter((r) => r.charged_krw > 0).length, charged);
      await assertNoPermitsLeft(c.orgId);

      // The released holds are available again: exactly as many more calls succeed as the balance covers.
      engine.reset();
      const left = COVERED - charged;
      const more = await Promise.all(Array.from({ length: left + 5 }, () => call(c.liveKey)));
      const moreOk = more.filter((o) => o.status === 200).length;
      if (storeAway(more).length === 0) assert.deepEqual(tally(more), { "200": left, "402 insufficient_credits": 5 });
      else assert.ok(moreOk <= left && more.every((o) => o.status === 200 || o.status === 402 || storeAway([o]).length === 1));
      await settleInDoubt();
      // What a timed-out store call kept from this wave, one call at a time (none when nothing timed out).
      for (let rest = left - moreOk - 1; rest >= 0; rest--) assert.equal((await call(c.liveKey)).balanceKrw, rest * PRICE);
      const end = await assertSettled(h.services.db, c.orgId);
      assert.equal(end.balanceKrw, 0);
      assert.equal(end.captures, COVERED, "in all, exactly what the balance covered was charged");
      assert.deepEqual(await ledgerSummary(h.services.db, c.orgId), end);
      await assertNoPermitsLeft(c.orgId);
    });
  });
}
