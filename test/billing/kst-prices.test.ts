import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { kstDay, kstMonth, nextKstMidnight, nextKstMonthStart, secondsUntil } from "../../src/billing/kst.ts";
import { priceForPixels, reserveAmountForSize } from "../../src/billing/prices.ts";

const utc = (s: string) => Date.parse(s);

test("KST day and month turn at 15:00 UTC", () => {
  assert.equal(kstDay(utc("2026-11-17T14:59:59.999Z")), "2026-11-17");
  assert.equal(kstDay(utc("2026-11-17T15:00:00.000Z")), "2026-11-18");
  assert.equal(kstMonth(utc("2026-11-30T14:59:59.999Z")), "2026-11");
  assert.equal(kstMonth(utc("2026-11-30T15:00:00.000Z")), "2026-12");
  assert.equal(kstMonth(utc("2026-12-31T15:00:00.000Z")), "2027-01");
  assert.equal(kstDay(utc("2028-02-28T15:00:00.000Z")), "2028-02-29"); // leap day
});

test("next KST midnight and month start", () => {
  assert.equal(nextKstMidnight(utc("2026-11-17T14:59:30Z")), utc("2026-11-17T15:00:00Z"));
  // Exactly at midnight the *next* one is a day away.
  assert.equal(nextKstMidnight(utc("2026-11-17T15:00:00Z")), utc("2026-11-18T15:00:00Z"));
  assert.equal(nextKstMonthStart(utc("2026-11-30T14:59:00Z")), utc("2026-11-30T15:00:00Z"));
  assert.equal(nextKstMonthStart(utc("2026-12-15T03:00:00Z")), utc("2026-12-31T15:00:00Z"));
  assert.equal(secondsUntil(utc("2026-11-17T14:59:30.5Z"), utc("2026-11-17T15:00:00Z")), 30);
  assert.equal(secondsUntil(10, 10), 1);
});

test("the next midnight and month start are always ahead and land on a KST boundary", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
      const m = nextKstMidnight(ms);
      assert.ok(m > ms && m - ms <= 86_400_000);
      assert.equal(kstDay(m - 1), kstDay(ms));
      assert.notEqual(kstDay(m), kstDay(ms));
      const s = nextKstMonthStart(ms);
      assert.ok(s > ms);
      assert.equal(kstMonth(s - 1), kstMonth(ms));
      assert.match(kstDay(s), /-01$/);
    }),
  );
});

test("reserve amount follows the size parameter", () => {
  for (const s of ["preview", "small", "regular"] as const) assert.equal(reserveAmountForSize(s), 22);
  for (const s of ["auto", "full", undefined] as const) assert.equal(reserveAmountForSize(s), 110);
});

test("capture price follows output pixels, 0.25 MP inclusive", () => {
  assert.equal(priceForPixels(500 * 500), 22);
  assert.equal(priceForPixels(250_001), 110);
  assert.equal(priceForPixels(1), 22);
  assert.equal(priceForPixels(4000 * 3000), 110);
});
