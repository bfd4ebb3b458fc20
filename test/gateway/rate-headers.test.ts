// X-RateLimit-Limit / -Remaining / -Reset on every answer to an authenticated removebg
// call (DECISIONS.md "Which limit X-RateLimit-* describe"): a test key's per-minute window,
// a live key's tightest spending limit in KRW. Embedded stores so the in-process
// limiter follows the test clock and a test can cross the window without waiting.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { nextKstMidnight, nextKstMonthStart } from "../../src/billing/index.ts";
import { gatewayHarness, randomIp, TINY_PNG, type GatewayHarness } from "./helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true });
});
after(() => g.close());

function rate(res: Response) {
  return {
    limit: res.headers.get("x-ratelimit-limit"),
    remaining: res.headers.get("x-ratelimit-remaining"),
    reset: res.headers.get("x-ratelimit-reset"),
  };
}

describe("test key: the per-minute window", () => {
  test("Remaining counts down; Reset is when the newest call leaves the window, and crossing it restores the count", async () => {
    const c = await g.h.customer();
    const seen: string[] = [];
    let lastCallAt = 0;
    for (let i = 0; i < 3; i++) {
      lastCallAt = g.clock.now();
      const res = await g.removebg(c.testKey, { image_file: TINY_PNG });
      assert.equal(res.status, 200);
      const r = rate(res);
      assert.equal(r.limit, "10");
      seen.push(r.remaining!);
      assert.equal(r.reset, String(Math.ceil((lastCallAt + 60_000) / 1000)));
      await res.arrayBuffer();
      g.clock.advance(5_000);
    }
    assert.deepEqual(seen, ["9", "8", "7"]);

    // A rejected call still counts in the window it entered (the window counts attempts past the form check).
    const bad = await g.removebg(c.testKey, { image_file: TINY_PNG, channels: "nope" });
    assert.equal(bad.status, 400);
    assert.equal(rate(bad).remaining, "7", "a form rejected before the limit step takes no call");
    await bad.arrayBuffer();

    const reset = Number(rate(bad).reset) * 1000;
    // One second before Reset the last call is still inside the window.
    g.clock.set(reset - 1000);
    const before = await g.removebg(c.testKey, { image_file: TINY_PNG });
    assert.equal(rate(before).remaining, "8", "the newest earlier call still counts, and this one");
    await before.arrayBuffer();
    // At the Reset of that answer, everything has left: the count is back to the limit less this call.
    g.clock.set(Number(rate(before).reset) * 1000);
    const after = await g.removebg(c.testKey, { image_file: TINY_PNG });
    assert.equal(rate(after).remaining, "9");
    await after.arrayBuffer();
  });

  test("the eleventh call in a minute: 429 with Remaining 0 and Reset matching Retry-After", async () => {
    const c = await g.h.customer();
    for (let i = 0; i < 10; i++) {
      const res = await g.removebg(c.testKey, { image_file: TINY_PNG });
      assert.equal(res.status, 200);
      assert.equal(rate(res).remaining, String(9 - i));
      await res.arrayBuffer();
    }
    const t = g.clock.now();
    const res = await g.removebg(c.testKey, { image_file: TINY_PNG });
    assert.equal(res.status, 429);
    assert.deepEqual(rate(res), { limit: "10", remaining: "0", reset: String(Math.ceil((t + 60_000) / 1000)) });
    assert.equal(Number(res.headers.get("retry-after")), 60);
    await res.arrayBuffer();
    g.clock.advance(60_000);
  });
});

describe("live key: the tightest spending limit, in KRW", () => {
  test("the org's daily limit counts down by each charge and resets at 00:00 KST", async () => {
    const c = await g.h.customer({ creditKrw: 10_000 });
    const first = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(first.status, 200);
    const midnight = String(nextKstMidnight(g.clock.now()) / 1000);
    assert.deepEqual(rate(first), { limit: "50000", remaining: String(50_000 - 22), reset: midnight });
    await first.arrayBuffer();
    // Full tier: 110 reserved, but a 64 × 48 output is charged at the preview price.
    const second = await g.removebg(c.liveKey, { image_file: TINY_PNG });
    assert.equal(second.headers.get("x-pd-charged-krw"), "22");
    assert.equal(rate(second).remaining, String(50_000 - 44));
    await second.arrayBuffer();
    // An error is free, so it leaves Remaining where it was.
    const bad = await g.removebg(c.liveKey, { image_file: TINY_PNG, bg_color: "nope" });
    assert.equal(bad.status, 400);
    assert.equal(rate(bad).remaining, String(50_000 - 44));
    await bad.arrayBuffer();
  });

  test("an app's monthly limit, when tighter, is the one described", async () => {
    const c = await g.h.customer({ creditKrw: 10_000 });
    const set = await g.h.admin("PATCH", `/apps/${c.appId}`, { dailyLimitKrw: 5_000, monthlyLimitKrw: 1_000 });
    assert.equal(set.status, 200, JSON.stringify(set.json));
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.deepEqual(rate(res), { limit: "1000", remaining: "978", reset: String(nextKstMonthStart(g.clock.now()) / 1000) });
    await res.arrayBuffer();
  });

  test("no headers for a caller without a valid key", async () => {
    const res = await g.removebg("pd_live_nope", { image_file: TINY_PNG }, { ip: randomIp() });
    assert.equal(res.status, 401);
    assert.deepEqual(rate(res), { limit: null, remaining: null, reset: null });
    await res.arrayBuffer();
  });
});
