// The estimates behind Retry-After outside the product's queue: the one
// rounding rule, permit holding time, the receive budget's drain rate, start-up left.
import { test } from "node:test";
import assert from "node:assert/strict";
import { retryAfterSeconds } from "../../src/http/retry-after.ts";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { createHoldClock, FIRST_HOLD_GUESS_MS } from "../../src/limits/hold-clock.ts";
import { testShareOf } from "../../src/limits/test-share.ts";
import { startUpRemainingMs, USUAL_START_MS } from "../../src/product/warm-up.ts";

test("Retry-After is whole seconds rounded up, at least 1, at most the deadline", () => {
  assert.equal(retryAfterSeconds(0), 1);
  assert.equal(retryAfterSeconds(1001), 2);
  assert.equal(retryAfterSeconds(3000), 3);
  assert.equal(retryAfterSeconds(500_000), 140);
  assert.equal(retryAfterSeconds(500_000, 60), 60);
  assert.equal(retryAfterSeconds(Number.NaN, 60), 60);
});

test("a full cap frees a slot every (holding time ÷ cap); 1 s before any permit came back", () => {
  const c = createHoldClock();
  assert.equal(c.untilRelease("global", 32), FIRST_HOLD_GUESS_MS);
  c.record("global", 64_000);
  assert.equal(c.untilRelease("global", 32), 2000);
  c.record("global", 4000); // 64 s × 0.8 + 4 s × 0.2
  assert.equal(c.untilRelease("global", 32), 52_000 / 32);
  assert.equal(c.untilRelease("org-live", 2), FIRST_HOLD_GUESS_MS, "groups are apart");
});

test("the receive budget's Retry-After follows the rate bodies finished at lately", () => {
  let t = 0;
  const b = createByteBudget(1000, () => t);
  assert.ok(b.tryTake(1000));
  assert.equal(b.untilRoomMs(500), 2000, "nothing given back yet: the fallback");
  b.give(500); // 500 bytes back in the last 10 s: 50 bytes/s
  assert.ok(b.tryTake(500));
  assert.equal(b.untilRoomMs(100), 100 / (500 / 10_000));
  t = 20_000; // the window has passed: no recent rate
  assert.equal(b.untilRoomMs(100), 2000);
  assert.equal(b.untilRoomMs(0), 0);
});

test("service_not_ready: what is left of a usual start, then a quarter of the time elapsed", () => {
  assert.equal(startUpRemainingMs(0), USUAL_START_MS);
  assert.equal(startUpRemainingMs(15_000), USUAL_START_MS - 15_000);
  assert.equal(startUpRemainingMs(80_000), 20_000);
});

test("the test share: rounded down, at least 1 unless 0, never above the capacity", () => {
  assert.equal(testShareOf(32, 50), 16);
  assert.equal(testShareOf(3, 50), 1);
  assert.equal(testShareOf(1, 10), 1);
  assert.equal(testShareOf(10, 0), 0);
  assert.equal(testShareOf(10, 100), 10);
});

test("before any permit came back, the in-process product's job rate is the guess", () => {
  let hint: number | undefined = 3900;
  const c = createHoldClock(() => hint);
  assert.equal(c.untilRelease("global", 32), 3900);
  hint = undefined;
  assert.equal(c.untilRelease("global", 32), FIRST_HOLD_GUESS_MS);
  c.record("global", 64_000);
  assert.equal(c.untilRelease("global", 32), 2000, "measured holds win");
});
