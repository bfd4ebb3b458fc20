// A request that dies in the product takes no money. Two sides of it:
//  - the product's worker dies mid-job (a real worker pool whose thread exits while it
//    holds the job): the product answers 500 inference_failed, the gateway does not
//    resend it (processing had begun), releases the hold, and charges nothing; a free
//    test call gets its allowance back;
//  - the product cannot be reached, or breaks off its answer: a connection error is a
//    rejection before processing and is resent (at most twice, charged once if a resend
//    succeeds); a 200 whose body breaks off is a failure after processing, not resent.
// Every path gives its permits back; the last test checks with a fresh call.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { errorResponse } from "../../src/http/error-response.ts";
import { createAdmission } from "../../src/product/admission.ts";
import { createProductApp } from "../../src/product/app.ts";
import { fixture, makeHarness, type Harness } from "../support/harness.ts";
import { createKillableEngine, type KillableEngine } from "../support/killable-engine.ts";
import { assertLogMatchesLedger, assertSettled, ledgerSummary, requestLogRows } from "../support/money-checks.ts";
import { globalBaseline, heldPermits, orgLiveKey } from "../support/permits.ts";
import { outcomeOf, sendRemovebg } from "../support/removebg-request.ts";
import { openStack, STACKS, type OpenedStack } from "../support/stacks.ts";

const FULL_IMAGE = fixture("photos/astronaut.png"); // 512×512 → full tier, 110 KRW
const SMALL_PNG = fixture("images/orient-upright.png"); // 64×48, a valid PNG answer
const FULL = 110;
const CREDIT = 1000;
const DEFAULT_WAIT_MS = 10_000; // RESEND_DEFAULT_WAIT_S

type ProductMode = "engine" | "unreachable" | "unreachable-once" | "inference-failed" | "cut-body" | "busy-once";

/** A 200 that starts like a PNG and then breaks off, as when the connection drops mid-answer. */
function brokenImageResponse(): Response {
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      ctrl.enqueue(SMALL_PNG.slice(0, 16));
    },
    pull(ctrl) {
      ctrl.error(new Error("socket closed by peer"));
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "image/png", "x-width": "64", "x-height": "48" } });
}

for (const stack of STACKS) {
  describe(`a request dying in the product takes no money [${stack.name}]`, { skip: stack.skip, timeout: 120_000 }, () => {
    let opened: OpenedStack | undefined;
    let engine: KillableEngine | undefined;
    let h: Harness;
    let mode: ProductMode = "engine";
    let productCalls = 0;
    let globalLeaked: () => Promise<number>;
    const sleeps: number[] = [];

    before(async () => {
      opened = await openStack(stack, 14);
      engine = createKillableEngine();
      await engine.whenReady();
      // The product service as buildApp assembles it, on the killable pool.
      const productApp = createProductApp({
        engine,
        admission: createAdmission({ poolSize: 1, keyQueueMax: 4, queueMax: 64, now: Date.now }),
        receiveBudget: createByteBudget(256 * 1024 * 1024),
        now: Date.now,
        defaultDeadlineMs: 140_000,
        isShuttingDown: () => false,
      });
      h = await makeHarness({
        embedded: opened.embedded,
        env: { ...opened.env, LOG_LEVEL: "warn" },
        engine: null,
        sleep: async (ms) => void sleeps.push(ms),
        async product(req) {
          const n = productCalls++;
          switch (mode) {
            case "engine":
              return productApp.fetch(req);
            case "unreachable":
              throw new TypeError("fetch failed: connect ECONNREFUSED");
            case "unreachable-once":
              if (n === 0) throw new TypeError("fetch failed: socket hang up");
              return productApp.fetch(req);
            case "busy-once":
              if (n === 0) return errorResponse("x", "deadline_unreachable", undefined, 3);
              return productApp.fetch(req);
            case "inference-failed":
              return errorResponse("x", "inference_failed");
            case "cut-body":
              return brokenImageResponse();
          }
        },
      });
      globalLeaked = await globalBaseline(h.services.limiter, h.config.GLOBAL_CONCURRENCY);
    });
    after(async () => {
      await h?.close();
      await engine?.dispose();
      await opened?.close();
    });

    /** Polls `cond` every 10 ms; fails the test instead of hanging. */
    async function until(what: string, cond: () => boolean, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      while (!cond()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }

    async function prepare(next: ProductMode) {
      mode = next;
      productCalls = 0;
      sleeps.length = 0;
      engine!.setMode("go");
      // After a worker died the pool answers service_not_ready until its replacement
      // is up; the resends' waits are instant here, so wait for it instead.
      await until("a ready pool", () => engine!.state().ready);
    }
    const call = (key: string, fields: Record<string, string | Uint8Array> = { image_file: FULL_IMAGE }) =>
      sendRemovebg((p, i) => h.app.request(p, i), key, fields).then(outcomeOf);
    const logRow = async (orgId: string, requestId: string) => (await requestLogRows(h.services.db, orgId)).find((r) => r.request_id === requestId)!;

    async function assertNothingTaken(orgId: string) {
      const s = await assertSettled(h.services.db, orgId);
      assert.deepEqual({ balance: s.balanceKrw, captures: s.captures }, { balance: CREDIT, captures: 0 });
      await assertLogMatchesLedger(h.services.db, orgId);
      assert.equal(await heldPermits(h.services.limiter, orgLiveKey(orgId), 2), 0, "org permits released");
    }

    test("the worker dies mid-job: 500 inference_failed, not resent, hold released", async () => {
      await prepare("engine");
      const c = await h.customer({ creditKrw: CREDIT });
      const before = engine!.jobsStarted();
      engine!.setMode("wait");
      const pending = call(c.liveKey);
      // The job is in a worker and the hold is open: the kill comes mid-processing.
      await until("the job to reach a worker", () => engine!.jobsStarted() > before);
      const during = await ledgerSummary(h.services.db, c.orgId);
      assert.deepEqual([during.openHolds, during.heldKrw], [1, FULL]);
      engine!.setMode("die");
      const o = await pending;

      assert.equal(o.status, 500);
      assert.equal(o.code, "inference_failed");
      assert.equal(o.chargedKrw, undefined);
      assert.equal(productCalls, 1, "a failure after processing began is not resent");
      assert.deepEqual(sleeps, []);
      const row = await logRow(c.orgId, o.requestId);
      assert.deepEqual([row.status, row.error_code, row.charged_krw, row.attempts], [500, "inference_failed", 0, 1]);
      await assertNothingTaken(c.orgId);

      // The pool replaced the worker: the next call is processed and charged once.
      await prepare("engine");
      const next = await call(c.liveKey);
      assert.deepEqual([next.status, next.chargedKrw, next.balanceKrw], [200, FULL, CREDIT - FULL]);
      assert.ok(engine!.restarts() >= 1);
    });

    test("a free test call whose worker dies gives its allowance back", async () => {
      await prepare("engine");
      const c = await h.customer({ creditKrw: CREDIT });
      const before = engine!.jobsStarted();
      engine!.setMode("wait");
      const pending = call(c.testKey);
      await until("the job to reach a worker", () => engine!.jobsStarted() > before);
      engine!.setMode("die");
      const o = await pending;
      assert.deepEqual([o.status, o.code], [500, "inference_failed"]);
      assert.equal(await h.services.testQuota.testCallsRemaining({ orgId: c.orgId, lifetime: false }), 50);
      await prepare("engine");
      const ok = await call(c.testKey);
      assert.deepEqual([ok.status, ok.testRemaining, ok.chargedKrw], [200, "49", undefined]);
      assert.equal((await ledgerSummary(h.services.db, c.orgId)).balanceKrw, CREDIT, "test calls are never charged");
    });

    test("product unreachable: resent twice, then 502 upstream_error, nothing charged", async () => {
      await prepare("unreachable");
      const c = await h.customer({ creditKrw: CREDIT });
      const o = await call(c.liveKey);
      assert.deepEqual([o.status, o.code], [502, "upstream_error"]);
      assert.equal(productCalls, 3, "first attempt + 2 resends");
      assert.deepEqual(sleeps, [DEFAULT_WAIT_MS, DEFAULT_WAIT_MS], "waits the default 10 s without Retry-After");
      const row = await logRow(c.orgId, o.requestId);
      assert.deepEqual([row.status, row.error_code, row.charged_krw, row.attempts], [502, "upstream_error", 0, 3]);
      await assertNothingTaken(c.orgId);
    });

    test("a resend that succeeds is charged once", async () => {
      for (const [m, wait] of [["unreachable-once", DEFAULT_WAIT_MS], ["busy-once", 3000]] as const) {
        await prepare(m);
        const c = await h.customer({ creditKrw: CREDIT });
        const o = await call(c.liveKey);
        assert.deepEqual([o.status, o.chargedKrw, o.balanceKrw], [200, FULL, CREDIT - FULL], m);
        assert.deepEqual(sleeps, [wait], `${m}: one resend after its wait`);
        const s = await assertSettled(h.services.db, c.orgId);
        assert.deepEqual([s.captures, s.capturedKrw], [1, FULL], `${m}: one hold, one capture`);
        const row = await logRow(c.orgId, o.requestId);
        assert.deepEqual([row.status, row.charged_krw, row.attempts], [200, FULL, 2]);
      }
    });

    test("inference_failed from the product is passed on, not resent, not charged", async () => {
      await prepare("inference-failed");
      const c = await h.customer({ creditKrw: CREDIT });
      const o = await call(c.liveKey);
      assert.deepEqual([o.status, o.code], [500, "inference_failed"]);
      assert.equal(productCalls, 1);
      assert.deepEqual(sleeps, []);
      await assertNothingTaken(c.orgId);
    });

    test("an answer that breaks off after processing: 502 upstream_error, not resent, not charged", async () => {
      await prepare("cut-body");
      const c = await h.customer({ creditKrw: CREDIT });
      const o = await call(c.liveKey);
      assert.deepEqual([o.status, o.code], [502, "upstream_error"]);
      assert.equal(productCalls, 1);
      assert.deepEqual(sleeps, []);
      await assertNothingTaken(c.orgId);
    });

    test("after every failure above, no permit is left: calls go through at the full cap", async () => {
      await prepare("engine");
      const c = await h.customer({ creditKrw: CREDIT });
      const outcomes = await Promise.all([call(c.liveKey), call(c.liveKey)]);
      assert.deepEqual(outcomes.map((o) => o.status), [200, 200], "both org permits are free");
      assert.equal(await globalLeaked(), 0, "no global permit leaked");
    });
  });
}
