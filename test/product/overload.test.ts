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
import { fixedTimeEngine } from "../support/fixed-time-engine.ts";
import { stubInlineEngine } from "../support/scripted-engine.ts";
import { removebgInit } from "../support/removebg-request.ts";
import { spyAdmission, type AdmissionSpy } from "../support/admission-spy.ts";
import { assertHonest, refusalOf, retryUntilAdmitted } from "../support/refusal-clock.ts";
import { TINY_PNG } from "../load/scenarios.ts";
import { poll } from "../support/poll.ts";

interface Stand {
  h: Harness;
  spy: AdmissionSpy;
  /** One call to the product endpoint; `budgetMs` sets its deadline from now. */
  call(o: { key: string; kind?: "live" | "test"; budgetMs?: number }): Promise<Response>;
}

async function stand(jobMs: number, env: Record<string, string>): Promise<Stand> {
  const engine = fixedTimeEngine(await stubInlineEngine(), { workers: 1, jobMs });
  const h = await makeHarness({ embedded: true, engine, env: { POOL_SIZE: "1", ...env } });
  // As the warm-up run would: the stand-in's job time is the first estimate.
  h.services.admission!.calibrate(jobMs);
  const spy = spyAdmission(h.services.admission!);
  const init = await removebgInit(undefined, { image_file: TINY_PNG, size: "preview" });
  return {
    h,
    spy,
    call: (o) =>
      Promise.resolve(
        h.app.request(PRODUCT_PATH, {
          ...init,
          headers: {
            ...init.headers,
            authorization: `Bearer ${OPERATOR_TOKEN}`,
            [H.queueKey]: o.key,
            [H.callClass]: o.kind ?? "live",
            ...(o.budgetMs ? { [H.deadline]: String(Date.now() + o.budgetMs) } : {}),
          },
        }),
      ),
  };
}

/**
 * The four stands below share nothing (embedded stores, an engine each) and mostly wait on
 * their stand-in jobs, so their suites run side by side (the file takes 21–23 s, not 39 s). All
 * four are built, one after another, before any test starts: a stand's start holds the
 * event loop for a moment, which would stretch another suite's measured waits.
 */
const STANDS = {
  estimate: [40, { QUEUE_MAX: "64", KEY_QUEUE_MAX: "64" }],
  retryAfter: [1500, { QUEUE_MAX: "2", KEY_QUEUE_MAX: "2" }],
  // Jobs of 800 ms: long enough that every call is queued before the first one ends, even on
  // a busy machine. Capacity 1 + 5 = 6, so test jobs may hold 3 of it.
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
      // 30 jobs of 40 ms on one worker: the last waits ~1.2 s for its turn.
      const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => s.call({ key: `burst-${i % 8}` })));
      assert.deepEqual(burst.map((r) => r.status), burst.map(() => 200));
      assert.equal(s.h.services.admission!.stats().inFlight, 0, "the queue has drained");
      // Measuring the waits would put the estimate near a second and refuse this call.
      const res = await s.call({ key: "after", budgetMs: 500 });
      assert.equal(res.status, 200, `after the burst: ${res.status} ${res.headers.get("retry-after")}`);
      assert.ok(s.h.services.admission!.stats().avgJobMs < 200, `estimate ${s.h.services.admission!.stats().avgJobMs} ms`);
    });
  });

  describe("Retry-After matches when a retry is admitted (one worker, 1.5 s per job)", { concurrency: false }, () => {
    const JOB_MS = STANDS.retryAfter[0];
    let s: Stand;
    before(async () => (s = await standFor("retryAfter")));
    after(() => s.h.close());

    /**
     * With the `held` calls in, one more call for `key` is refused with `code`; its
     * Retry-After is then held to the moment a retry (every 100 ms) gets in.
     */
    async function refusedThenAdmitted(held: Promise<Response>[], key: string, code: string, o: { budgetMs?: number } = {}) {
      await inFlight(s, held.length);
      const refusal = await refusalOf(await s.call({ key, ...o }));
      assert.equal(refusal.code, code);
      const retry = () => s.spy.attempt(key, () => s.call({ key, ...o }));
      const got = await retryUntilAdmitted(refusal, retry, { everyMs: 100, timeoutMs: 10_000 });
      assertHonest(refusal, got.afterMs, JOB_MS);
      await Promise.all([...held, got.done]);
    }

    test("queue_full: the queue frees when the running job ends", async () => {
      await refusedThenAdmitted(["a", "b", "c"].map((key) => s.call({ key })), "d", "queue_full");
    });

    test("key_queue_full: the key's first job ends", async () => {
      await refusedThenAdmitted([s.call({ key: "k" }), s.call({ key: "k" })], "k", "key_queue_full");
    });

    test("deadline_unreachable: by how much the call misses its deadline", async () => {
      // Each call may take 3.5 s from its arrival: the third (ends at 4.5 s) misses by 1 s.
      const budgetMs = 3500;
      const held = [s.call({ key: "x", budgetMs }), s.call({ key: "y", budgetMs })];
      await refusedThenAdmitted(held, "z", "deadline_unreachable", { budgetMs });
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
      // waited ≥ 1.5 s and goes before l2…l5, which were all queued within l0's second.
      const done = [(await send("l0", "live")).finished, (await send("t", "test")).finished];
      for (const k of ["l1", "l2", "l3", "l4", "l5"]) done.push((await send(k, "live")).finished);
      await Promise.all(done);
      assert.deepEqual(order, ["l0", "l1", "t", "l2", "l3", "l4", "l5"]);
    });
  });
});
