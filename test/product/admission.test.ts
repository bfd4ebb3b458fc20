// Admission decides before any work starts: per-key queue, total queue, deadline.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAdmission } from "../../src/product/admission.ts";

const clock = (t = 1_000_000) => ({ now: () => t, advance: (ms: number) => (t += ms) });

test("a key with keyQueueMax requests in progress gets key_queue_full with Retry-After", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 2, queueMax: 100, now: c.now, initialJobMs: 3000 });
  const far = c.now() + 140_000;
  const t1 = a.admit("k", far);
  const t2 = a.admit("k", far);
  assert.ok(t1.ok && t2.ok);
  const third = a.admit("k", far);
  assert.equal(third.ok, false);
  assert.equal(!third.ok && third.code, "key_queue_full");
  assert.equal(!third.ok && third.retryAfter, 3);
  // Another key is not affected; finishing one frees the first key's slot.
  assert.ok(a.admit("other", far).ok);
  t1.ok && t1.ticket.done(3000);
  assert.ok(a.admit("k", far).ok);
});

test("work that cannot finish before the deadline is refused with deadline_unreachable", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 100, queueMax: 100, now: c.now, initialJobMs: 10_000 });
  // Free pool: 10 s of work fits in a 15 s deadline.
  const first = a.admit("a", c.now() + 15_000);
  assert.ok(first.ok);
  // Second waits 10 s for the first, then needs 10 s: 20 s > 15 s. It misses by 5 s, so
  // the same request (same time budget) sent 5 s later would fit: Retry-After 5.
  const second = a.admit("b", c.now() + 15_000);
  assert.equal(!second.ok && second.code, "deadline_unreachable");
  assert.equal(!second.ok && second.retryAfter, 5);
  // With a longer deadline it fits.
  assert.ok(a.admit("b", c.now() + 25_000).ok);
});

test("the total queue is bounded (queue_full) and the estimate follows real durations", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 2, keyQueueMax: 100, queueMax: 1, now: c.now, initialJobMs: 1000 });
  const far = c.now() + 1_000_000;
  const tickets = [a.admit("a", far), a.admit("b", far), a.admit("c", far)];
  assert.ok(tickets.every((t) => t.ok));
  const fourth = a.admit("d", far);
  assert.equal(!fourth.ok && fourth.code, "queue_full");
  assert.deepEqual(a.stats().queued, 1);
  for (const t of tickets) if (t.ok) t.ticket.done(6000);
  assert.ok(a.stats().avgJobMs > 1000, "average moves toward observed durations");
  assert.equal(a.stats().inFlight, 0);
});

test("done() twice counts once", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 1, queueMax: 10, now: c.now });
  const t = a.admit("k", c.now() + 1e9);
  assert.ok(t.ok);
  t.ticket.done(100);
  t.ticket.done(100);
  assert.equal(a.stats().inFlight, 0);
  assert.ok(a.admit("k", c.now() + 1e9).ok);
});

test("the warm-up time replaces the starting guess until real jobs report, so a slow machine refuses early", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 100, queueMax: 100, now: c.now, initialJobMs: 3000 });
  a.calibrate(12_000);
  assert.equal(a.stats().avgJobMs, 12_000);
  // Deadline 140 s: with 12 s jobs, the 12th queued job could not end in time (12 × 12 s = 144 s).
  const deadline = c.now() + 140_000;
  const answers = Array.from({ length: 12 }, (_, i) => a.admit(`k${i}`, deadline));
  assert.equal(answers.filter((t) => t.ok).length, 11);
  const last = answers[11]!;
  assert.equal(!last.ok && last.code, "deadline_unreachable");
  // A real job's duration wins over the warm-up, and later calibration is ignored.
  for (const t of answers) if (t.ok) t.ticket.done(5000);
  a.calibrate(60_000);
  assert.ok(a.stats().avgJobMs < 12_000);
});

test("live jobs take a free worker before test jobs; a test job that waited testMaxWaitMs goes next", async () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 10, queueMax: 10, now: c.now, initialJobMs: 1000, testMaxWaitMs: 1500 });
  const far = c.now() + 1e9;
  const started: string[] = [];
  const take = (k: string, kind: "live" | "test") => {
    const r = a.admit(k, far, kind);
    assert.ok(r.ok, k);
    void r.ticket.start().then((turn) => turn.ok && started.push(k));
    return r.ticket;
  };
  const first = take("l0", "live");
  const t1 = take("t1", "test");
  const l1 = take("l1", "live");
  const l2 = take("l2", "live");
  const flush = () => new Promise((r) => setImmediate(r));
  await flush();
  c.advance(1000);
  first.done(1000); // t1 has waited 1 s: l1 goes
  await flush();
  c.advance(1000);
  l1.done(1000); // t1 has waited 2 s ≥ 1.5 s: it goes before l2
  await flush();
  assert.deepEqual(started, ["l0", "l1", "t1"]);
  t1.done(1000);
  await flush();
  assert.deepEqual(started, ["l0", "l1", "t1", "l2"]);
  l2.done(1000);
});

test("a queued job whose deadline passes before a worker is free is not started", async () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 10, queueMax: 10, now: c.now, initialJobMs: 1000 });
  const running = a.admit("a", c.now() + 1e9);
  const late = a.admit("b", c.now() + 2500);
  assert.ok(running.ok && late.ok);
  c.advance(3000); // the running job overran; b's deadline has passed
  running.ticket.done(3000);
  const turn = await late.ticket.start();
  assert.equal(!turn.ok && turn.code, "deadline_unreachable");
  assert.equal(a.stats().inFlight, 0);
});

test("the forecast behind deadline_unreachable counts the jobs ahead of the caller's class", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 2, keyQueueMax: 10, queueMax: 10, now: c.now, initialJobMs: 1000 });
  const far = c.now() + 1e9;
  for (const k of ["t1", "t2", "t3", "t4"]) assert.ok(a.admit(k, far, "test").ok);
  // Two test jobs run (end at 1 s), two wait. A live call goes before the waiting test
  // jobs: it starts at 1 s and ends at 2 s, so a 2 s budget is enough…
  assert.ok(a.admit("live", c.now() + 2000, "live").ok);
  // …while a test call comes after the live one and both queued test jobs (live and t3
  // at 1–2 s, t4 and t5 at 2–3 s): it ends at 3 s and misses a 2.5 s budget by 0.5 s.
  const t5 = a.admit("t5", c.now() + 2500, "test");
  assert.equal(!t5.ok && t5.code, "deadline_unreachable");
  assert.equal(!t5.ok && t5.retryAfter, 1);
  assert.ok(a.admit("t5", c.now() + 3000, "test").ok);
});

test("the estimate is kept per tier: measured previews admit previews that full-size jobs' time would refuse", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 100, queueMax: 100, now: c.now, initialJobMs: 3000 });
  const far = c.now() + 1e9;
  // One measured job of each tier: a full-size cut-out 4 s, a preview 1 s.
  for (const [tier, ms] of [["full", 4000], ["preview", 1000]] as const) {
    const t = a.admit("k", far, "live", tier);
    assert.ok(t.ok);
    t.ticket.done(ms);
  }
  assert.deepEqual(a.stats().jobMsByTier, { preview: 1000, full: 4000 });
  assert.equal(a.stats().avgJobMs, 4000, "the gauge shows the larger, a full-size job's");
  // One full job running (ends in 4 s); a preview queued behind it ends at 5 s, a full one at 8 s.
  const running = a.admit("k", far, "live", "full");
  assert.ok(running.ok);
  assert.ok(a.admit("p", c.now() + 5_500, "live", "preview").ok, "a preview fits in 5.5 s");
  const full = a.admit("f", c.now() + 8_500, "live", "full");
  assert.equal(!full.ok && full.code, "deadline_unreachable", "a full job behind both needs 4 + 1 + 4 s");
  assert.equal(!full.ok && full.retryAfter, 1);
  // Omitted, the tier is full.
  assert.equal(a.admit("g", c.now() + 8_500).ok, false);
});

test("a tier with no measured job yet borrows the other tier's measure, not the starting guess", () => {
  const c = clock();
  const a = createAdmission({ poolSize: 1, keyQueueMax: 100, queueMax: 100, now: c.now, initialJobMs: 30_000 });
  const t = a.admit("k", c.now() + 1e9, "live", "full");
  assert.ok(t.ok);
  t.ticket.done(2000);
  assert.deepEqual(a.stats().jobMsByTier, { preview: 2000, full: 2000 });
  // calibrate() moves only estimates no real job has set.
  a.calibrate(500);
  assert.deepEqual(a.stats().jobMsByTier, { preview: 2000, full: 2000 });
  const b = createAdmission({ poolSize: 1, keyQueueMax: 100, queueMax: 100, now: c.now, initialJobMs: 30_000 });
  b.calibrate(500);
  assert.deepEqual(b.stats().jobMsByTier, { preview: 500, full: 500 });
});
