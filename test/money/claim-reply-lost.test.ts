// An Idempotency-Key claim or a test key's free call whose statement failed with a store
// error: the call is answered 503, but the statement may have committed (its reply was
// lost) or may commit later (cut short while it waited, sent anyway). The call keeps
// nothing: the client that sends the same key again once the store is back gets its
// call run (not 409 until the key's lease ends), and a 503 uses no free call. The
// timing is injected by wrapping the store's statement, so the test decides which comes
// first; the real statements run against the real store.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { TEST_CALLS_PER_PERIOD } from "../../src/billing/index.ts";
import type { IdempotencyClaims } from "../../src/billing/idempotency.ts";
import type { TestQuota } from "../../src/billing/test-quota.ts";
import { drainReconciler, lostReply } from "../support/money-checks.ts";
import { expectError, gatewayHarness, productError, scriptedProduct, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";

const CREDIT = 1000;
const keyed = (key: string) => ({ headers: { "idempotency-key": key } });
const preview = { image_file: TINY_PNG, size: "preview" };

describe("a claim or free call with an unknown outcome is given back", () => {
  let g: GatewayHarness;
  before(async () => {
    g = await gatewayHarness();
  });
  after(async () => {
    await g?.close();
  });

  type Claim = IdempotencyClaims["claim"];
  function withClaim(step: (c: Parameters<Claim>[0], real: Claim) => ReturnType<Claim>) {
    const store = g.h.services.idempotency;
    return g.variant({ services: { idempotency: { ...store, claim: (c) => step(c, store.claim) } } });
  }

  type Consume = TestQuota["consumeTestCall"];
  function withConsume(step: (q: Parameters<Consume>[0], real: Consume) => ReturnType<Consume>) {
    const quota = g.h.services.testQuota;
    return g.variant({ services: { testQuota: { ...quota, consumeTestCall: (q) => step(q, quota.consumeTestCall) } } });
  }

  /** The same key sent again once the store is back runs as a first request and is charged once. */
  async function sameKeyRuns(liveKey: string, key: string) {
    const res = await g.removebg(liveKey, preview, keyed(key));
    assert.equal(res.status, 200, await res.clone().text().catch(() => ""));
    await res.arrayBuffer();
    assert.equal(res.headers.get("idempotent-replayed"), null);
    assert.notEqual(res.headers.get("x-pd-charged-krw"), "0");
  }

  describe("Idempotency-Key claim", () => {
    test("committed, then the answer lost: 503, and the same key runs once the store answers", async () => {
      const c = await g.h.customer({ creditKrw: CREDIT });
      const key = `order-${crypto.randomUUID()}`;
      const v = withClaim(async (input, real) => {
        assert.equal(await real(input), "fresh");
        throw lostReply();
      });
      await expectError(await v.removebg(c.liveKey, preview, keyed(key)), 503, "service_unavailable");
      await drainReconciler(g.h.services.reconciler);
      await sameKeyRuns(c.liveKey, key);
    });

    test("told the store is away first, the statement runs after the give-back: it claims nothing", async () => {
      const c = await g.h.customer({ creditKrw: CREDIT });
      const key = `order-${crypto.randomUUID()}`;
      let late: (() => ReturnType<Claim>) | undefined;
      const v = withClaim(async (input, real) => {
        late = () => real(input);
        throw lostReply();
      });
      await expectError(await v.removebg(c.liveKey, preview, keyed(key)), 503, "service_unavailable");
      await drainReconciler(g.h.services.reconciler);
      assert.equal(await late!(), "given_back", "a claim of a given-back request claims nothing");
      await sameKeyRuns(c.liveKey, key);
    });

    test("the late statement and the give-back at the same time: whichever lands first, the key is free", async () => {
      const c = await g.h.customer({ creditKrw: CREDIT });
      const key = `order-${crypto.randomUUID()}`;
      let late: Promise<unknown> | undefined;
      const v = withClaim(async (input, real) => {
        late = new Promise((r) => setTimeout(r, 5)).then(() => real(input));
        throw lostReply();
      });
      await expectError(await v.removebg(c.liveKey, preview, keyed(key)), 503, "service_unavailable");
      await Promise.all([late, drainReconciler(g.h.services.reconciler)]);
      await drainReconciler(g.h.services.reconciler);
      await sameKeyRuns(c.liveKey, key);
    });

    test("a failed call whose claim could not be given back: given back once the store answers", async () => {
      const c = await g.h.customer({ creditKrw: CREDIT });
      const key = `order-${crypto.randomUUID()}`;
      const store = g.h.services.idempotency;
      const v = g.variant({
        services: { idempotency: { ...store, forget: async () => Promise.reject(lostReply()) } },
        product: scriptedProduct(() => productError(500, "inference_failed")).fn,
      });
      const failed = await v.removebg(c.liveKey, preview, keyed(key));
      await failed.arrayBuffer();
      assert.ok(failed.status >= 500, `an error (${failed.status})`);
      await drainReconciler(g.h.services.reconciler);
      await sameKeyRuns(c.liveKey, key);
    });
  });

  describe("a test key's free call", () => {
    async function assertNoneUsed(orgId: string, testKey: string) {
      assert.equal(await g.h.services.testQuota.testCallsRemaining({ orgId, lifetime: false }), TEST_CALLS_PER_PERIOD, "no free call used by a 503");
      const res = await g.removebg(testKey, preview);
      assert.equal(res.status, 200, await res.clone().text().catch(() => ""));
      await res.arrayBuffer();
      assert.equal(res.headers.get("x-pd-test-remaining"), String(TEST_CALLS_PER_PERIOD - 1));
    }

    test("counted, then the answer lost: 503, and the call is given back", async () => {
      const c = await g.h.customer();
      const v = withConsume(async (q, real) => {
        assert.equal((await real(q)).ok, true);
        throw lostReply();
      });
      await expectError(await v.removebg(c.testKey, preview), 503, "service_unavailable");
      await drainReconciler(g.h.services.reconciler);
      await assertNoneUsed(c.orgId, c.testKey);
    });

    test("told the store is away first, the statement runs after the give-back: it counts nothing", async () => {
      const c = await g.h.customer();
      let late: (() => ReturnType<Consume>) | undefined;
      const v = withConsume(async (q, real) => {
        late = () => real(q);
        throw lostReply();
      });
      await expectError(await v.removebg(c.testKey, preview), 503, "service_unavailable");
      await drainReconciler(g.h.services.reconciler);
      assert.equal((await late!()).ok, false, "a free call of a given-back request counts nothing");
      await assertNoneUsed(c.orgId, c.testKey);
    });

    test("the late statement and the give-back at the same time: nothing stays counted", async () => {
      const c = await g.h.customer();
      let late: Promise<unknown> | undefined;
      const v = withConsume(async (q, real) => {
        late = new Promise((r) => setTimeout(r, 5)).then(() => real(q));
        throw lostReply();
      });
      await expectError(await v.removebg(c.testKey, preview), 503, "service_unavailable");
      await Promise.all([late, drainReconciler(g.h.services.reconciler)]);
      await drainReconciler(g.h.services.reconciler);
      await assertNoneUsed(c.orgId, c.testKey);
    });

    test("a failed call whose refund met a store error: given back once, however often asked", async () => {
      const c = await g.h.customer();
      const quota = g.h.services.testQuota;
      const v = g.variant({
        services: { testQuota: { ...quota, refundTestCall: async () => Promise.reject(lostReply()) } },
        product: scriptedProduct(() => productError(500, "inference_failed")).fn,
      });
      const failed = await v.removebg(c.testKey, preview);
      await failed.arrayBuffer();
      assert.ok(failed.status >= 500, `an error (${failed.status})`);
      await drainReconciler(g.h.services.reconciler);
      assert.equal(await quota.testCallsRemaining({ orgId: c.orgId, lifetime: false }), TEST_CALLS_PER_PERIOD, "given back by the reconciler");
      // Asked again (a reconciler round that raced its answer): still one call given back.
      const r = await g.h.services.db.query<{ request_id: string }>("SELECT request_id FROM call_takes WHERE org_id = $1 AND what = 'free_call'", [c.orgId]);
      await quota.abandonTestCall({ requestId: r[0]!.request_id, orgId: c.orgId });
      await assertNoneUsed(c.orgId, c.testKey);
    });
  });
});
