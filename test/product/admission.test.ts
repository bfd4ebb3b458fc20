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
