// The invalid-key guard's memory of clear addresses (src/limits/invalid-key-guard.ts):
// one limiter call per address per CLEAR_MEMORY_MS while it stays clear, a block from
// another guard (another gateway process) seen within that time, and this guard's own
// invalid keys counted as exactly as without the memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CLEAR_MEMORY_MS, createInvalidKeyGuard } from "../../src/limits/invalid-key-guard.ts";
import { createMemoryLimiter } from "../../src/limits/memory-limiter.ts";
import type { Limiter } from "../../src/limits/index.ts";

const W = 60_000;

function setup() {
  let t = 1_000_000;
  const now = () => t;
  const limiter = createMemoryLimiter({ now });
  let asked = 0;
  /** When set, the guard's limiter answers only once it resolves (a slow round trip). */
  let hold: Promise<void> | undefined;
  const counting: Limiter = {
    ...limiter,
    isOver: async (...a) => {
      asked++;
      const answer = await limiter.isOver(...a);
      await hold;
      return answer;
    },
  };
  const guard = createInvalidKeyGuard(counting, { limit: 3, windowMs: W, now });
  // Another gateway process: its own guard over the same counters.
  const other = createInvalidKeyGuard(limiter, { limit: 3, windowMs: W, now });
  return { guard, other, limiter, asked: () => asked, advance: (ms: number) => (t += ms), holdAnswers: (p: Promise<void> | undefined) => (hold = p) };
}

const clear = { blocked: false, retryAfterS: 0 };

test("a clear address is asked about once per CLEAR_MEMORY_MS", async () => {
  const s = setup();
  for (let i = 0; i < 5; i++) assert.deepEqual(await s.guard.check("198.51.100.1"), clear);
  assert.equal(s.asked(), 1);
  s.advance(CLEAR_MEMORY_MS - 1);
  await s.guard.check("198.51.100.1");
  assert.equal(s.asked(), 1, "still within the memory");
  s.advance(1);
  await s.guard.check("198.51.100.1");
  assert.equal(s.asked(), 2, "asked again once the memory ran out");
  await s.guard.check("198.51.100.2");
  assert.equal(s.asked(), 3, "each address on its own");
});

test("this guard's own invalid keys block at the limit, memory or not", async () => {
  const s = setup();
  const ip = "198.51.100.7";
  for (let i = 1; i <= 3; i++) {
    assert.deepEqual(await s.guard.check(ip), clear, `request ${i}`);
    assert.equal(await s.guard.recordInvalid(ip), i);
  }
  const blocked = await s.guard.check(ip);
  assert.equal(blocked.blocked, true);
  assert.equal(blocked.retryAfterS, W / 1000);
  assert.equal((await s.guard.check(ip)).blocked, true, "a blocked address is never remembered as clear");
});

test("a block recorded by another gateway applies here within CLEAR_MEMORY_MS, and at once after an invalid key here", async () => {
  const s = setup();
  const ip = "198.51.100.9";
  assert.deepEqual(await s.guard.check(ip), clear);
  for (let i = 0; i < 3; i++) await s.other.recordInvalid(ip);
  assert.equal((await s.other.check(ip)).blocked, true);
  assert.deepEqual(await s.guard.check(ip), clear, "remembered as clear: the other's block is not seen yet");
  s.advance(CLEAR_MEMORY_MS);
  assert.equal((await s.guard.check(ip)).blocked, true, "seen once the memory ran out");

  const ip2 = "198.51.100.10";
  assert.deepEqual(await s.guard.check(ip2), clear);
  for (let i = 0; i < 3; i++) await s.other.recordInvalid(ip2);
  await s.guard.recordInvalid(ip2); // an invalid key from it, here
  assert.equal((await s.guard.check(ip2)).blocked, true, "an invalid key here forgets the address");
});

test("a check that was asking while an invalid key was recorded is not remembered", async () => {
  const s = setup();
  const ip = "198.51.100.11";
  let answer!: () => void;
  s.holdAnswers(new Promise<void>((r) => (answer = r)));
  const asking = s.guard.check(ip); // the limiter read "clear"; its answer arrives after the records below
  for (let i = 0; i < 3; i++) await s.other.recordInvalid(ip);
  await s.guard.recordInvalid(ip);
  answer();
  s.holdAnswers(undefined);
  assert.deepEqual(await asking, clear, "it answers what it read");
  assert.equal((await s.guard.check(ip)).blocked, true);
});
