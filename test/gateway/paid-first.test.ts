// Paid calls first at the gateway: test keys may hold at most their share
// (TEST_SHARE_PERCENT, default half) of the global concurrency cap, so live calls
// still get in when test traffic tries to fill it; and a test call refused because live
// calls hold the cap is told, in Retry-After, when a slot really frees. Through HTTP,
// real stores when DATABASE_URL/REDIS_URL are set, a stand-in model whose jobs end when
// the test says, and the service's clock (the Redis scripts' too) in the test's hands:
// every count and Retry-After here is exact on any machine (docs/TESTING.md).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { makeHarness, errorOf, type Harness } from "../support/harness.ts";
import { drainJobs, endRunningJob, gatedEngine, testClock, type GatedEngine, type TestClock } from "../support/gated-engine.ts";
import { stubInlineEngine } from "../support/scripted-engine.ts";
import { spyAdmission, type AdmissionSpy } from "../support/admission-spy.ts";
import { assertHonest, refusalOf } from "../support/refusal-clock.ts";
import { TINY_PNG } from "../load/scenarios.ts";
import { Redis } from "ioredis";
import { redisUrlWithDb } from "../support/stacks.ts";

const preview = { image_file: TINY_PNG, size: "preview" };
type Customer = Awaited<ReturnType<Harness["customer"]>>;

/**
 * The caps here are small and the global permits are shared by every harness on one
 * Redis, so with REDIS_URL set this file has a Redis database of its own (emptied
 * first); other suites' calls would otherwise hold slots of these caps.
 */
const PAID_FIRST_REDIS_DB = 6;

async function privateRedis(): Promise<Record<string, string>> {
  if (!process.env.REDIS_URL) return {};
  const url = redisUrlWithDb(PAID_FIRST_REDIS_DB);
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await r.flushdb();
  } finally {
    r.disconnect();
  }
  return { REDIS_URL: url };
}

interface Stand {
  h: Harness;
  spy: AdmissionSpy;
  engine: GatedEngine;
  clock: TestClock;
}

async function stand(jobMs: number, env: Record<string, string>): Promise<Stand> {
  const engine = gatedEngine(await stubInlineEngine(), { workers: 1, jobMs });
  const clock = testClock();
  const h = await makeHarness({ engine, now: clock.now, env: { POOL_SIZE: "1", QUEUE_MAX: "64", KEY_QUEUE_MAX: "8", ...(await privateRedis()), ...env } });
  h.services.admission!.calibrate(jobMs); // as the warm-up run would
  return { h, spy: spyAdmission(h.services.admission!), engine, clock };
}

describe("test keys filling the global cap leave room for live calls", () => {
  const JOB_MS = 1500;
  let s: Stand;
  let h: Harness;
  let spy: AdmissionSpy;
  before(async () => ({ h, spy } = s = await stand(JOB_MS, { GLOBAL_CONCURRENCY: "4" })));
  after(() => h.close());

  test("with the global cap (4) filled by test keys, they hold 2 and a live call is still admitted", async () => {
    const testers: Customer[] = [];
    for (let i = 0; i < 4; i++) testers.push(await h.customer({ live: false }));
    const payer = await h.customer({ creditKrw: 1000 });
    const tries = await Promise.all(testers.map((c) => spy.attempt(c.testKeyId, () => Promise.resolve(h.removebg(c.testKey, preview)))));
    assert.equal(tries.filter((t) => t.admitted).length, 2, "test calls hold half of the cap");
    for (const t of tries.filter((x) => !x.admitted)) {
      const res = await t.done;
      assert.equal(res.status, 429);
      assert.ok(Number(res.headers.get("retry-after")) >= 1);
      const e = await errorOf(res);
      assert.equal(e.code, "rate_limited");
      assert.match(e.title, /live keys go first/);
    }
    const live = await spy.attempt(payer.liveKeyId, () => Promise.resolve(h.removebg(payer.liveKey, preview)));
    assert.ok(live.admitted, "the live call got in while test calls held their share");
    await drainJobs(s.engine, h.services.admission!, s.clock, JOB_MS);
    assert.equal((await live.done).status, 200);
    for (const t of tries.filter((x) => x.admitted)) assert.equal((await t.done).status, 200);
  });
});

describe("live load only: a test call's Retry-After says when a slot frees", () => {
  const JOB_MS = 2000;
  let s: Stand;
  let h: Harness;
  let spy: AdmissionSpy;
  before(async () => ({ h, spy } = s = await stand(JOB_MS, { GLOBAL_CONCURRENCY: "2", ORG_LIVE_CONCURRENCY: "2" })));
  after(() => h.close());

  test("429 rate_limited with a Retry-After within one job of the moment a retry gets in", async () => {
    const payer = await h.customer({ creditKrw: 10_000 });
    // The refused caller comes back itself (six calls in all, under its 10 a minute): its
    // place in the cap's line is what the freed slot is held for.
    const tester = await h.customer({ live: false });
    // One after the other: the spy tells admissions apart by key only, so two calls of
    // one key sent together could both see the first one's admission while the second
    // has not yet taken its permits.
    const liveWave = async () => {
      const got = [];
      for (let i = 0; i < 2; i++) got.push(await spy.attempt(payer.liveKeyId, () => Promise.resolve(h.removebg(payer.liveKey, preview))));
      assert.ok(got.every((g) => g.admitted));
      return got.map((g) => g.done);
    };
    const testCall = () => spy.attempt(tester.testKeyId, () => Promise.resolve(h.removebg(tester.testKey, preview)));
    /**
     * The wave's first job ends JOB_MS after it started (its permits come back when its
     * answer is made): a test call sent 1 ms before is refused, one sent when the
     * refusal said is admitted; the Retry-After is held to that moment.
     */
    const honestAgainst = async (wave: Promise<Response>[], refusal: Awaited<ReturnType<typeof refusalOf>>) => {
      s.clock.advance(JOB_MS - 1);
      const early = await testCall();
      assert.equal(early.admitted, false, "1 ms before a slot frees a test call is still refused");
      assert.equal((await early.done).status, 429);
      await endRunningJob(s.engine, h.services.admission!, s.clock, 1);
      assert.equal((await wave[0]!).status, 200);
      s.clock.advance(Math.max(0, refusal.retryAfterS * 1000 - JOB_MS));
      const retry = await testCall();
      assert.ok(retry.admitted, `a test call sent ${refusal.retryAfterS} s after the refusal is admitted`);
      assertHonest(refusal, JOB_MS, JOB_MS);
      // Wrapped: an async function returning the promise itself would wait for it.
      return { done: retry.done };
    };

    // A fresh process: no permit has come back yet, so the product's own time per job
    // ÷ workers (2 s) says how soon one ends, not a flat second.
    const first = await liveWave();
    const cold = await refusalOf(await h.removebg(tester.testKey, preview));
    assert.equal(cold.code, "rate_limited");
    assert.equal(cold.retryAfterS, 2);
    const coldRetry = (await honestAgainst(first, cold)).done;
    // That wave also shows the gateway how long live calls hold their permits.
    await drainJobs(s.engine, h.services.admission!, s.clock, JOB_MS);
    for (const r of await Promise.all([...first, coldRetry])) assert.equal(r.status, 200);
    // Calls refused after taking their permits (no credit) held them for no time at all:
    // they must not make a full cap look about to free.
    const broke = await h.customer({ creditKrw: 0 });
    for (let i = 0; i < 5; i++) assert.equal((await h.removebg(broke.liveKey, preview)).status, 402);

    const wave = await liveWave();
    const refusal = await refusalOf(await h.removebg(tester.testKey, preview));
    assert.equal(refusal.status, 429);
    assert.equal(refusal.code, "rate_limited");
    // Live holds of 2 s and 4 s seen, 2 slots: one frees every 1.2 s or more, so not the old flat 1.
    assert.ok(refusal.retryAfterS >= 2, `Retry-After ${refusal.retryAfterS}`);
    const retry = (await honestAgainst(wave, refusal)).done;
    await drainJobs(s.engine, h.services.admission!, s.clock, JOB_MS);
    for (const r of await Promise.all([...wave, retry])) assert.equal(r.status, 200);
  });
});
