// The invalid-key guard (src/limits/invalid-key-guard.ts) on its own: it counts invalid
// keys per address up to the limit, refuses the ones after it without counting them (a
// flood does not stretch its own block), and lets the address back once the window has
// passed. It is asked about invalid keys only; that a valid key is never refused is the
// gateway's order (test/gateway/auth.test.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createInvalidKeyGuard } from "../../src/limits/invalid-key-guard.ts";
import { createMemoryLimiter } from "../../src/limits/memory-limiter.ts";
import type { Limiter } from "../../src/limits/index.ts";

const W = 60_000;

function setup() {
  let t = 1_000_000;
  const limiter = createMemoryLimiter({ now: () => t });
  let recorded = 0;
  const counting: Limiter = {
    ...limiter,
    record: (...a) => {
      recorded++;
      return limiter.record(...a);
    },
  };
  const guard = createInvalidKeyGuard(counting, { limit: 3, windowMs: W });
  return { guard, recorded: () => recorded, advance: (ms: number) => (t += ms) };
}

test("the limit's worth of invalid keys pass as 401s; the next is refused with the window's Retry-After", async () => {
  const s = setup();
  const ip = "198.51.100.7";
  for (let i = 1; i <= 3; i++) assert.deepEqual(await s.guard.invalidKey(ip), { over: false }, `key ${i}`);
  assert.deepEqual(await s.guard.invalidKey(ip), { over: true, retryAfterS: W / 1000 });
  assert.deepEqual(await s.guard.invalidKey("198.51.100.8"), { over: false }, "another address is not affected");
});

test("once over, further invalid keys are refused without being counted, and the address is back after the window", async () => {
  const s = setup();
  const ip = "198.51.100.9";
  for (let i = 0; i < 4; i++) await s.guard.invalidKey(ip);
  const counted = s.recorded();
  s.advance(10_000);
  for (let i = 0; i < 50; i++) {
    const v = await s.guard.invalidKey(ip);
    assert.equal(v.over, true);
    assert.equal(v.over && v.retryAfterS, 50, "the oldest counted key leaves the window in 50 s");
  }
  assert.equal(s.recorded(), counted, "a blocked address's keys are not counted: the block does not grow");
  s.advance(50_000);
  assert.deepEqual(await s.guard.invalidKey(ip), { over: false });
});

test("concurrent invalid keys from one address: exactly the limit pass", async () => {
  const s = setup();
  const verdicts = await Promise.all(Array.from({ length: 20 }, () => s.guard.invalidKey("198.51.100.10")));
  assert.equal(verdicts.filter((v) => !v.over).length, 3);
});

test("bad settings are programming errors", () => {
  const limiter = createMemoryLimiter();
  assert.throws(() => createInvalidKeyGuard(limiter, { limit: 0 }), RangeError);
  assert.throws(() => createInvalidKeyGuard(limiter, { windowMs: 1.5 }), RangeError);
});
