// Test keys (spec §5.3, §8 test-key rows, DECISIONS.md "Money and quotas"): 10 calls per
// minute, 50 per KST month, 1 at a time, 50 for life in an operator-reduced org, all
// 429 test_quota_exceeded; X-PD-Test-Size / X-PD-Test-Remaining on every answer, and
// an error gives its call back.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import { expectError, gatewayHarness, heldProduct, productError, TINY_PNG, type GatewayHarness } from "./helpers.ts";

const KST = 9 * 3600_000;
let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const image = { image_file: TINY_PNG };

async function success(res: Response): Promise<number> {
  assert.equal(res.status, 200, await res.clone().text());
  await res.arrayBuffer();
  assert.equal(res.headers.get("x-pd-test-size"), "preview");
  return Number(res.headers.get("x-pd-test-remaining"));
}

/** Sets this org's usage counter directly (50 real calls would only slow the suite). */
async function setUsage(orgId: string, period: string, count: number) {
  await g.h.services.db.query(
    `INSERT INTO test_usage (org_id, period, count) VALUES ($1, $2, $3)
     ON CONFLICT (org_id, period) DO UPDATE SET count = EXCLUDED.count`,
    [orgId, period, count],
  );
}

describe("X-PD-Test-Remaining", () => {
  test("counts down from 49; an error gives its call back; errors carry the headers too", async () => {
    const c = await g.h.customer({ live: false });
    assert.equal(await success(await g.removebg(c.testKey, image)), 49);
    assert.equal(await success(await g.removebg(c.testKey, image)), 48);

    // Failed after the call was taken (product error): given back, so 48 again.
    const failing = g.variant({ product: async () => productError(500, "inference_failed") });
    const err = await failing.removebg(c.testKey, image);
    await expectError(err.clone(), 500, "inference_failed");
    assert.equal(err.headers.get("x-pd-test-size"), "preview");
    assert.equal(err.headers.get("x-pd-test-remaining"), "48");

    // Refused before anything was taken (bad parameter): headers present, count unchanged.
    const bad = await g.removebg(c.testKey, { ...image, size: "huge" });
    assert.equal(bad.headers.get("x-pd-test-size"), "preview");
    assert.equal(bad.headers.get("x-pd-test-remaining"), "48");
    await expectError(bad, 400, "unsupported_parameter");

    assert.equal(await success(await g.removebg(c.testKey, image)), 47);
    const acct = await g.account(c.testKey);
    assert.equal(((await acct.json()) as { data: { testCallsRemaining: number } }).data.testCallsRemaining, 47);
  });

  test("live keys get no test headers", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await g.removebg(c.liveKey, { ...image, size: "preview" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-pd-test-size"), null);
    assert.equal(res.headers.get("x-pd-test-remaining"), null);
    const bad = await g.removebg(c.liveKey, { ...image, size: "huge" });
    assert.equal(bad.headers.get("x-pd-test-size"), null);
    assert.equal(bad.headers.get("x-pd-test-remaining"), null);
  });
});

describe("429 test_quota_exceeded", () => {
  test("the 11th call within a minute; allowed again when the window moves (test clock)", async () => {
    const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
    const c = await g.h.customer({ live: false });
    for (let i = 0; i < 10; i++) {
      await success(await v.removebg(c.testKey, image));
      g.clock.advance(1000);
    }
    const res = await v.removebg(c.testKey, image);
    assert.equal(res.headers.get("x-pd-test-remaining"), "40", "a refused call takes nothing");
    const e = await expectError(res, 429, "test_quota_exceeded");
    // The first of the ten was 10 s ago: a slot frees in 50 s.
    assert.equal(e.retryAfter, "50");
    g.clock.advance(50_000);
    assert.equal(await success(await v.removebg(c.testKey, image)), 39);
  });

  test("the per-minute limit counts failed attempts too (it protects capacity)", async () => {
    const failing = g.variant({
      product: async () => productError(400, "invalid_parameter"),
      limiter: createMemoryLimiter({ now: g.clock.now }),
    });
    const c = await g.h.customer({ live: false });
    for (let i = 0; i < 10; i++) await expectError(await failing.removebg(c.testKey, image), 400, "invalid_parameter");
    await expectError(await failing.removebg(c.testKey, image), 429, "test_quota_exceeded");
  });

  test("the 11th call within a minute on the configured limiter", async () => {
    const c = await g.h.customer({ live: false });
    for (let i = 0; i < 10; i++) await success(await g.removebg(c.testKey, image));
    const e = await expectError(await g.removebg(c.testKey, image), 429, "test_quota_exceeded");
    const retry = Number(e.retryAfter);
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${e.retryAfter}`);
  });

  test("the 51st call of a KST month; the 1st of next month 00:00 KST resets it", async () => {
    // 2025-06-30 23:59:00 KST
    g.clock.set(Date.UTC(2025, 5, 30, 23, 59) - KST);
    const c = await g.h.customer({ live: false });
    await setUsage(c.orgId, "2025-06", 49);
    assert.equal(await success(await g.removebg(c.testKey, image)), 0);
    const res = await g.removebg(c.testKey, image);
    assert.equal(res.headers.get("x-pd-test-remaining"), "0");
    const e = await expectError(res, 429, "test_quota_exceeded");
    assert.equal(e.retryAfter, "60", "seconds until 2025-07-01 00:00 KST");
    g.clock.advance(60_000);
    assert.equal(await success(await g.removebg(c.testKey, image)), 49);
  });

  test("an operator-reduced org has 50 calls for life: no monthly reset, no Retry-After", async () => {
    g.clock.set(Date.UTC(2025, 6, 31, 12, 0) - KST);
    const c = await g.h.customer({ live: false });
    const patched = await g.h.admin("PATCH", `/orgs/${c.orgId}`, { testQuota: "lifetime" });
    assert.equal(patched.json.testQuota, "lifetime");
    await setUsage(c.orgId, "lifetime", 48);
    assert.equal(await success(await g.removebg(c.testKey, image)), 1);
    g.clock.advance(24 * 3600_000); // into August: a monthly org would have 50 again
    assert.equal(await success(await g.removebg(c.testKey, image)), 0);
    const res = await g.removebg(c.testKey, image);
    const e = await expectError(res, 429, "test_quota_exceeded");
    assert.equal(e.retryAfter, null, "it never resets");
    assert.equal(res.headers.get("x-pd-test-remaining"), "0");
  });

  test("a second concurrent call of one test key", async () => {
    const held = heldProduct();
    const v = g.variant({ product: held.fn });
    const c = await g.h.customer({ live: false });
    const first = v.removebg(c.testKey, image);
    await held.untilArrived(1);
    const e = await expectError(await v.removebg(c.testKey, image), 429, "test_quota_exceeded");
    assert.ok(Number(e.retryAfter) >= 1);
    held.releaseAll();
    assert.equal(await success(await first), 49);
    // The permit was given back: the key works again.
    const again = v.removebg(c.testKey, image);
    await held.untilArrived(2);
    held.releaseAll();
    assert.equal(await success(await again), 48);
  });
});
