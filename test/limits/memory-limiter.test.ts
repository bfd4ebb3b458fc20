// In-process limiter: the shared contract on a fake clock, plus what only it has.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createLimiter, createMemoryLimiter } from "../../src/limits/index.ts";
import { runLimiterContract } from "./limiter-contract.ts";

function fakeClock(start = 1_750_000_000_000) {
  let now = start;
  return { now: () => now, advance: async (ms: number) => void (now += ms), set: (t: number) => void (now = t) };
}

const clock = fakeClock();
runLimiterContract({
  name: "memory",
  make: (o) => createMemoryLimiter({ now: clock.now, ...o }),
  advance: clock.advance,
  unit: 60_000,
});

test("memory: createLimiter without a Redis URL gives the in-process limiter on the injected clock", async () => {
  const c = fakeClock();
  const l = createLimiter({ now: c.now });
  assert.equal((await l.hit("k", 1, 1000)).allowed, true);
  assert.equal((await l.hit("k", 1, 1000)).allowed, false);
  await c.advance(1000);
  assert.equal((await l.hit("k", 1, 1000)).allowed, true, "only the injected clock moved");
  await l.close();
});

test("memory: record keeps only the newest maxLogEntries and still reports a correct retry-after", async () => {
  const c = fakeClock();
  const l = createMemoryLimiter({ now: c.now, maxLogEntries: 5 });
  for (let i = 0; i < 8; i++) {
    await l.record("flood", 10_000);
    await c.advance(100);
  }
  // Events at 0..700 ms; kept: 300..700. Now = 800.
  assert.equal(await l.record("flood", 10_000), 5); // adds 800, drops 300
  const over = await l.isOver("flood", 5, 10_000);
  assert.deepEqual(over, { over: true, retryAfterMs: 400 + 10_000 - 800 });
  await l.close();
});

test("memory: a clock that steps back does not corrupt the window", async () => {
  const c = fakeClock(10_000);
  const l = createMemoryLimiter({ now: c.now });
  await l.hit("k", 3, 1000);
  c.set(9_500);
  await l.hit("k", 3, 1000);
  c.set(10_400);
  // Both earlier hits are still within 1000 ms of 10 400, so both count.
  assert.deepEqual(await l.hit("k", 3, 1000), { allowed: true, remaining: 0, retryAfterMs: 0 });
  const refused = await l.hit("k", 3, 1000);
  assert.equal(refused.retryAfterMs, 9_500 + 1000 - 10_400, "oldest hit leaves first regardless of call order");
  await l.close();
});

test("memory: idle keys are swept, so distinct keys do not pile up", async () => {
  const c = fakeClock();
  const l = createMemoryLimiter({ now: c.now, sweepIntervalMs: 1000 });
  for (let i = 0; i < 100; i++) await l.record(`ip-${i}`, 500);
  const p = await l.acquire("slot", 1, 500);
  assert.ok(p.ok);
  await c.advance(2000);
  await l.record("trigger", 500); // runs the sweep
  // A swept key behaves exactly like a fresh one.
  assert.equal(await l.record("ip-0", 500), 1);
  assert.equal(await p.permit.renew(), false);
  assert.ok((await l.acquire("slot", 1, 500)).ok);
  await l.close();
});
