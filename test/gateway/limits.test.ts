// Spending and capacity limits (spec §7 429/503 rows, §8): org live concurrency 2, the
// global concurrency cap, org and app daily limits, the app monthly limit (reset at
// 00:00 KST), and the gateway's incoming-byte budget (503 gateway_busy).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import {
  assertNoOpenHold,
  balanceOf,
  expectError,
  gatewayHarness,
  heldProduct,
  holdsOf,
  TINY_PNG,
  type GatewayHarness,
} from "./helpers.ts";

const KST = 9 * 3600_000;
let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const preview = { image_file: TINY_PNG, size: "preview" };

async function ok(res: Response | Promise<Response>, what = "call") {
  const r = await res;
  assert.equal(r.status, 200, `${what}: ${await r.clone().text()}`);
  await r.arrayBuffer();
  return r;
}

describe("429 rate_limited: concurrency", () => {
  test("an organization's third concurrent live call; other orgs and its test key unaffected", async () => {
    const held = heldProduct();
    const v = g.variant({ product: held.fn });
    const c = await g.h.customer({ creditKrw: 1000 });
    const other = await g.h.customer({ creditKrw: 1000 });
    const running = [v.removebg(c.liveKey, preview), v.removebg(c.liveKey, preview)];
    await held.untilArrived(2);
    const e = await expectError(await v.removebg(c.liveKey, preview), 429, "rate_limited");
    assert.ok(Number(e.retryAfter) >= 1, `Retry-After ${e.retryAfter}`);
    // The refused call took no hold: only the two running ones are reserved.
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 - 44 });
    const otherCall = v.removebg(other.liveKey, preview);
    const testCall = v.removebg(c.testKey, preview);
    await held.untilArrived(4);
    held.releaseAll();
    for (const r of [...running, otherCall, testCall]) await ok(r);
    // Permits were given back.
    const again = v.removebg(c.liveKey, preview);
    await held.untilArrived(5);
    held.releaseAll();
    await ok(again);
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 1000 - 3 * 22);
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("the global cap (GLOBAL_CONCURRENCY) refuses live and test calls of any org", async () => {
    const held = heldProduct();
    // Its own in-process limiter: the "global" permit set is shared by every process on a real Redis.
    const v = g.variant({ product: held.fn, config: { GLOBAL_CONCURRENCY: 2 }, limiter: createMemoryLimiter({ now: g.clock.now }) });
    const a = await g.h.customer({ creditKrw: 1000 });
    const b = await g.h.customer({ creditKrw: 1000 });
    const c = await g.h.customer({ creditKrw: 1000 });
    const running = [v.removebg(a.liveKey, preview), v.removebg(b.testKey, preview)];
    await held.untilArrived(2);
    const live = await expectError(await v.removebg(c.liveKey, preview), 429, "rate_limited");
    assert.ok(Number(live.retryAfter) >= 1);
    await expectError(await v.removebg(c.testKey, preview), 429, "rate_limited");
    assert.deepEqual(await holdsOf(g.h, c.orgId), [], "refused before any hold");
    held.releaseAll();
    for (const r of running) await ok(r);
    const after = v.removebg(c.liveKey, preview);
    await held.untilArrived(3);
    held.releaseAll();
    await ok(after, "after the cap freed");
  });
});

describe("429 daily_limit_reached", () => {
  test("organization daily limit set with PATCH /orgs; resets at 00:00 KST", async () => {
    g.clock.set(Date.UTC(2025, 8, 10, 22, 0) - KST); // 2025-09-10 22:00 KST
    const c = await g.h.customer({ creditKrw: 10_000 });
    assert.equal((await g.h.admin("PATCH", `/orgs/${c.orgId}`, { dailyLimitKrw: 100 })).json.dailyLimitKrw, 100);
    for (let i = 0; i < 4; i++) await ok(g.removebg(c.liveKey, preview), `call ${i + 1}`); // 88 spent
    const e = await expectError(await g.removebg(c.liveKey, preview), 429, "daily_limit_reached");
    assert.equal(e.retryAfter, String(2 * 3600), "seconds until 00:00 KST");
    // The full tier reserves 110, over the limit even on a fresh day's first call.
    g.clock.advance(2 * 3600_000);
    await expectError(await g.removebg(c.liveKey, { image_file: TINY_PNG }), 429, "daily_limit_reached");
    await ok(g.removebg(c.liveKey, preview), "next KST day");
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 10_000 - 5 * 22);
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("a full-tier call counts its reserve while running and only its charge afterwards", async () => {
    const c = await g.h.customer({ creditKrw: 10_000 });
    await g.h.admin("PATCH", `/orgs/${c.orgId}`, { dailyLimitKrw: 150 });
    const full = { image_file: TINY_PNG }; // reserves 110, charged 22 (64 × 48 output)
    await ok(g.removebg(c.liveKey, full), "spent 22");
    await ok(g.removebg(c.liveKey, full), "22 + 110 ≤ 150");
    // 44 spent: one more full reserve (110) would pass 150, a preview one (22) would not.
    await expectError(await g.removebg(c.liveKey, full), 429, "daily_limit_reached");
    await ok(g.removebg(c.liveKey, preview), "preview fits");
    // While a full call runs, its whole reserve counts.
    const held = heldProduct();
    const v = g.variant({ product: held.fn });
    await g.h.admin("PATCH", `/orgs/${c.orgId}`, { dailyLimitKrw: 66 + 110 });
    const running = v.removebg(c.liveKey, full);
    await held.untilArrived(1);
    await expectError(await v.removebg(c.liveKey, preview), 429, "daily_limit_reached");
    held.releaseAll();
    await ok(running);
    await ok(g.removebg(c.liveKey, preview), "the running call's unused reserve was given back");
  });

  test("a daily limit of 0 stops paid calls; the test key is not limited", async () => {
    const c = await g.h.customer({ creditKrw: 10_000 });
    await g.h.admin("PATCH", `/orgs/${c.orgId}`, { dailyLimitKrw: 0 });
    await expectError(await g.removebg(c.liveKey, preview), 429, "daily_limit_reached");
    await ok(g.removebg(c.testKey, preview), "test key");
  });

  test("the default organization limit is 50,000 KRW a day", async () => {
    const c = await g.h.customer({ creditKrw: 100_000 });
    assert.equal((await g.h.admin("GET", `/orgs/${c.orgId}`)).json.dailyLimitKrw, 50_000);
    // Spend recorded today up to 49,990: one more preview call (22) would pass 50,000.
    const day = new Date(g.clock.now() + KST).toISOString().slice(0, 10);
    await g.h.services.db.query("INSERT INTO spend_counters (scope_id, period, krw) VALUES ($1, $2, 49990)", [c.orgId, day]);
    await expectError(await g.removebg(c.liveKey, preview), 429, "daily_limit_reached");
  });

  test("app daily limit; clearing it with null lifts it", async () => {
    const c = await g.h.customer({ creditKrw: 10_000 });
    const p = await g.h.admin("PATCH", `/apps/${c.appId}`, { dailyLimitKrw: 44 });
    assert.equal(p.status, 200);
    assert.equal(p.json.dailyLimitKrw, 44);
    await ok(g.removebg(c.liveKey, preview));
    await ok(g.removebg(c.liveKey, preview));
    const e = await expectError(await g.removebg(c.liveKey, preview), 429, "daily_limit_reached");
    assert.match(e.title, /app/i);
    assert.ok(Number(e.retryAfter) >= 1);
    assert.equal((await g.h.admin("PATCH", `/apps/${c.appId}`, { dailyLimitKrw: null })).json.dailyLimitKrw, null);
    await ok(g.removebg(c.liveKey, preview), "limit cleared");
  });
});

describe("429 monthly_limit_reached", () => {
  test("app monthly limit; resets on the 1st at 00:00 KST", async () => {
    g.clock.set(Date.UTC(2025, 9, 31, 23, 30) - KST); // 2025-10-31 23:30 KST
    const c = await g.h.customer({ creditKrw: 10_000 });
    await g.h.admin("PATCH", `/apps/${c.appId}`, { monthlyLimitKrw: 66 });
    for (let i = 0; i < 3; i++) await ok(g.removebg(c.liveKey, preview));
    const e = await expectError(await g.removebg(c.liveKey, preview), 429, "monthly_limit_reached");
    assert.equal(e.retryAfter, String(30 * 60), "seconds until 2025-11-01 00:00 KST");
    g.clock.advance(30 * 60_000);
    await ok(g.removebg(c.liveKey, preview), "November");
    await assertNoOpenHold(g.h, c.orgId);
  });
});

describe("503 gateway_busy", () => {
  test("uploads beyond the receive budget are refused with Retry-After; the budget is given back", async () => {
    // Room for one upload of unannounced length (counted as the 12,000,000 maximum).
    const budget = createByteBudget(12_000_000);
    const v = g.variant({ gatewayBudget: budget });
    const c = await g.h.customer({ creditKrw: 1000 });
    let finish!: () => void;
    const slow = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        await new Promise<void>((r) => (finish = r));
        ctrl.close();
      },
    });
    const first = v.app.request("/v1.0/removebg", {
      method: "POST",
      body: slow,
      headers: { "x-api-key": c.liveKey, "x-forwarded-for": g.ip, "content-type": "multipart/form-data; boundary=b" },
      duplex: "half",
    } as RequestInit);
    while (budget.inUse() === 0) await new Promise((r) => setTimeout(r, 5));
    const e = await expectError(await v.removebg(c.liveKey, preview), 503, "gateway_busy");
    assert.equal(e.retryAfter, "2", "nothing given back lately: the 2 s fallback (DECISIONS.md)");
    finish();
    await expectError(await first, 400, "invalid_parameter"); // its empty body is not a form
    assert.equal(budget.inUse(), 0, "the budget was given back");
    await ok(v.removebg(c.liveKey, preview), "room again");
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("an announced length is what is counted", async () => {
    const v = g.variant({ gatewayBudget: createByteBudget(1000) });
    const c = await g.h.customer({ creditKrw: 1000 });
    const body = new Uint8Array(2000);
    const res = await v.app.request("/v1.0/removebg", {
      method: "POST",
      body,
      headers: { "x-api-key": c.liveKey, "x-forwarded-for": g.ip, "content-type": "multipart/form-data; boundary=b", "content-length": "2000" },
    });
    await expectError(res, 503, "gateway_busy");
  });
});
