// Under overload, on the internal product endpoint with a stand-in model of
// fixed duration: the job-time estimate is the workers' service time (an idle service
// admits a normal call right after a burst), refusals carry a Retry-After that matches
// when a retry is really admitted, live jobs go before test jobs, test jobs hold at most
// their share of the queue and still do not starve.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { H } from "../../src/http/headers.ts";
import { PRODUCT_PATH } from "../../src/product/app.ts";
import { makeHarness, OPERATOR_TOKEN, type Harness } from "../support/harness.ts";
import { drainJobs, endRunningJob, gatedEngine, testClock, type GatedEngine, type TestClock } from "../support/gated-engine.ts";
import { stubInlineEngine } from "../support/scripted-engine.ts";
import { removebgInit } from "../support/removebg-request.ts";
import { spyAdmission, type AdmissionSpy } from "../support/admission-spy.ts";
import { refusalOf } from "../support/refusal-clock.ts";
import { TINY_PNG } from "../load/scenarios.ts";
import { poll } from "../support/poll.ts";

// Every stand runs on a clock the test moves and an engine whose jobs end when the test
// says (test/support/gated-engine.ts): each order and each Retry-After below is exact on
// any machine, however long a step takes there (docs/TESTING.md).
interface Stand {
  h: Harness;
  spy: AdmissionSpy;
  engine: GatedEngine;
  clock: TestClock;
  /** One call to the product endpoint; `budgetMs` sets its deadline from the stand's now. */
  call(o: { key: string; kind?: "live" | "test"; budgetMs?: number }): Promise<Response>;
  /** Moves the clock by `ms`, ends the running job and waits for the admission to hand the worker on. */
  endRunningAfter(ms: number): Promise<void>;
}

async function stand(jobMs: number, env: Record<string, string>): Promise<Stand> {
  const engine = gatedEngine(await stubInlineEngine(), { workers: 1, jobMs });
  const clock = testClock();
  const h = await makeHarness({ embedded: true, engine, now: clock.now, env: { POOL_SIZE: "1", ...env } });
  const admission = h.services.admission!;
  // As the warm-up run would: the stand-in's job time is the first estimate.
  admission.calibrate(jobMs);
  const spy = spyAdmission(admission);
  const init = await removebgInit(undefined, { image_file: TINY_PNG, size: "preview" });
  return {
    h,
    spy,
    engine,
    clock,
    call: (o) =>
      Promise.resolve(
        h.app.request(PRODUCT_PATH, {
          ...init,
          headers: {
            ...init.headers,
            authorization: `Bearer ${OPERATOR_TOKEN}`,
            [H.queueKey]: o.key,
            [H.callClass]: o.kind ?? "live",
            ...(o.budgetMs ? { [H.deadline]: String(clock.now() + o.budgetMs) } : {}),
          },
        }),
      ),
    endRunningAfter: (ms) => endRunningJob(engine, admission, clock, ms),
  };
}

/** Ends every job in flight, `jobMs` apart on the stand's clock. */
const drain = (s: Stand, jobMs: number) => drainJobs(s.engine, s.h.services.admission!, s.clock, jobMs);

/**
 * The four stands below share nothing (embedded stores, an engine and a clock each), so
 * their suites run side by side.
 */
const STANDS = {
  estimate: [40, { QUEUE_MAX: "64", KEY_QUEUE_MAX: "64" }],
  retryAfter: [1500, { QUEUE_MAX: "2", KEY_QUEUE_MAX: "2" }],
  // Capacity 1 + 5 = 6, so test jobs may hold 3 of it.
  paidFirst: [800, { QUEUE_MAX: "5", KEY_QUEUE_MAX: "8", TEST_MAX_WAIT_MS: "60000" }],
  starvation: [1000, { QUEUE_MAX: "8", KEY_QUEUE_MAX: "8", TEST_MAX_WAIT_MS: "1500" }],
} as const satisfies Record<string, readonly [number, Record<string, string>]>;
let built: Promise<Record<keyof typeof STANDS, Stand>> | undefined;
function standFor(name: keyof typeof STANDS): Promise<Stand> {
  built ??= (async () => {
    const out = {} as Record<keyof typeof STANDS, Stand>;
    for (const [n, [jobMs, env]] of Object.entries(STANDS)) out[n as keyof typeof STANDS] = await stand(jobMs, env);
    return out;
  })();
  return built.then((all) => all[name]);
}

const inFlight = (s: Stand, n: number) =>
  poll(`${n} jobs admitted`, async () => s.h.services.admission!.stats().inFlight, (v) => v >= n);

describe("side by side", { concurrency: true }, () => {
  describe("the estimate is the workers' own time, not the wait", { concurrency: false }, () => {
    let s: Stand;
    before(async () => (s = await standFor("estimate")));
    after(() => s.h.close());

    test("an idle service admits a normal call right after a burst", async () => {
      // 30 jobs of 40 ms on one worker: the last waits 1.16 s on the service's clock for its turn.
      const burst = Array.from({ length: 30 }, (_, i) => s.call({ key: `burst-${i % 8}` }));
      await inFlight(s, 30);
      await drain(s, STANDS.estimate[0]);
      const answers = await Promise.all(burst);
      assert.deepEqual(answers.map((r) => r.status), answers.map(() => 200));
      assert.equal(s.h.services.admission!.stats().inFlight, 0, "the queue has drained");
      // Measuring the waits would put the estimate near a second and refuse this call.
      const after = s.call({ key: "after", budgetMs: 500 });
      await inFlight(s, 1);
      await s.endRunningAfter(STANDS.estimate[0]);
      const res = await after;
      assert.equal(res.status, 200, `after the burst: ${res.status} ${res.headers.get("retry-after")}`);
      assert.equal(s.h.services.admission!.stats().avgJobMs, STANDS.estimate[0], "the estimate is the workers' own time");
    });
  });

  describe("Retry-After matches when a retry is admitted (one worker, 1.5 s per job)", { concurrency: false }, () => {
    const JOB_MS = STANDS.retryAfter[0];
    let s: Stand;
    before(async () => (s = await standFor("retryAfter")));
    after(() => s.h.close());

    /**
     * With the `held` calls in (the first running since the clock last moved), one more call
     * for `key` is refused with `code`. What makes room comes `freesInMs` later (the running
     * job ends on time, or the call simply fits then). The Retry-After is honest: it is that
     * wait rounded up to whole seconds; a retry just before it is refused, one sent when it
     * says is admitted.
     */
    async function refusedThenAdmitted(held: Promise<Response>[], key: string, code: string, o: { budgetMs?: number; freesInMs: number; jobEnds: boolean }) {
      await inFlight(s, held.length);
      const refusal = await refusalOf(await s.call({ key, budgetMs: o.budgetMs }));
      assert.equal(refusal.code, code);
      assert.equal(refusal.retryAfterS, Math.ceil(o.freesInMs / 1000), `${code}: Retry-After ${refusal.retryAfterS} s for a wait of ${o.freesInMs} ms`);
      s.clock.advance(o.freesInMs - 1);
      const early = await s.call({ key, budgetMs: o.budgetMs });
      assert.equal(early.status === 200 ? "admitted" : (await refusalOf(early)).code, code, "1 ms before room is made the retry is still refused");
      if (o.jobEnds) await s.endRunningAfter(1);
      else s.clock.advance(1);
      s.clock.advance(refusal.retryAfterS * 1000 - o.freesInMs);
      const retry = await s.spy.attempt(key, () => s.call({ key, budgetMs: o.budgetMs }));
      assert.ok(retry.admitted, `${code}: a retry after the Retry-After is admitted`);
      await drain(s, JOB_MS);
      await Promise.all([...held, retry.done]);
    }

    test("queue_full: the queue frees when the running job ends", async () => {
      await refusedThenAdmitted(["a", "b", "c"].map((key) => s.call({ key })), "d", "queue_full", { freesInMs: JOB_MS, jobEnds: true });
    });

    test("key_queue_full: the key's first job ends", async () => {
      await refusedThenAdmitted([s.call({ key: "k" }), s.call({ key: "k" })], "k", "key_queue_full", { freesInMs: JOB_MS, jobEnds: true });
    });

    test("deadline_unreachable: by how much the call misses its deadline", async () => {
      // Each call may take 3.5 s from its arrival: the third (ends at 4.5 s) misses by 1 s.
      const budgetMs = 3500;
      const held = [s.call({ key: "x", budgetMs }), s.call({ key: "y", budgetMs })];
      await refusedThenAdmitted(held, "z", "deadline_unreachable", { budgetMs, freesInMs: 1000, jobEnds: false });
    });
  });

  describe("paid calls first in the queue", { concurrency: false }, () => {
    let s: Stand;
    before(async () => (s = await standFor("paidFirst")));
    after(() => s.h.close());

    /** Sends the calls in order, each once the previous one is admitted, and returns them in the order they finished. */
    async function finishOrder(calls: { key: string; kind: "live" | "test" }[]): Promise<string[]> {
      const order: string[] = [];
      const all: Promise<void>[] = [];
      for (const c of calls) {
        const at = await s.spy.attempt(c.key, () => s.call(c));
        assert.ok(at.admitted, `${c.key} admitted`);
        all.push(at.done.then((r) => (assert.equal(r.status, 200), void order.push(c.key))));
      }
      await drain(s, STANDS.paidFirst[0]);
      await Promise.all(all);
      return order;
    }

    test("live jobs are served before test jobs that arrived earlier, in arrival order within each class", async () => {
      const order = await finishOrder([
        { key: "first", kind: "live" }, // takes the worker
        { key: "t1", kind: "test" },
        { key: "t2", kind: "test" },
        { key: "l1", kind: "live" },
        { key: "l2", kind: "live" },
      ]);
      assert.deepEqual(order, ["first", "l1", "l2", "t1", "t2"]);
    });

    test("test jobs hold at most their share of the queue; live calls are still admitted", async () => {
      const tests = ["t1", "t2", "t3"].map((key) => s.spy.attempt(key, () => s.call({ key, kind: "test" })));
      const admitted = await Promise.all(tests);
      assert.ok(admitted.every((a) => a.admitted));
      const refused = await s.call({ key: "t4", kind: "test" });
      assert.equal(refused.status, 503);
      const r = await refusalOf(refused);
      assert.equal(r.code, "queue_full");
      const live = await s.spy.attempt("l", () => s.call({ key: "l", kind: "live" }));
      assert.ok(live.admitted, "a live call is admitted while test jobs hold their share");
      await drain(s, STANDS.paidFirst[0]);
      await Promise.all([...admitted.map((a) => a.done), live.done]);
    });
  });

  describe("no starvation: a test job that has waited TEST_MAX_WAIT_MS goes before live jobs", { concurrency: false }, () => {
    let s: Stand;
    before(async () => (s = await standFor("starvation")));
    after(() => s.h.close());

    test("under a steady live queue the test job is served after about TEST_MAX_WAIT_MS, not last", async () => {
      const order: string[] = [];
      const send = async (key: string, kind: "live" | "test") => {
        const at = await s.spy.attempt(key, () => s.call({ key, kind }));
        assert.ok(at.admitted);
        // Wrapped: an async function returning the promise itself would wait for it.
        return { finished: at.done.then((r) => (assert.equal(r.status, 200), void order.push(key))) };
      };
      // l0 runs 0–1 s; t waits. At 1 s t has waited < 1.5 s, so l1 goes; at 2 s t has
      // waited ≥ 1.5 s and goes before l2…l5, which were all queued at 0.
      const done = [(await send("l0", "live")).finished, (await send("t", "test")).finished];
      for (const k of ["l1", "l2", "l3", "l4", "l5"]) done.push((await send(k, "live")).finished);
      await drain(s, STANDS.starvation[0]);
      await Promise.all(done);
      assert.deepEqual(order, ["l0", "l1", "t", "l2", "l3", "l4", "l5"]);
    });
  });
});
