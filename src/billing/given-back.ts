// What a call takes before the product runs, besides its hold, handed to the
// reconciler when its statement fails with a store error: the Idempotency-Key claim
// and the test key's free call. Such a statement's outcome is unknown (its reply was
// lost, or the pg adapter cut it short while it waited or ran and the driver sends it
// anyway), and the call is answered 503. Left alone, the key would answer 409 until its
// lease ends (deadline + 10 s) and the free call would stay used. The give-back marks
// the request ID first (migrations/0007), so it holds in whatever order it meets the
// statement; a give-back that itself fails with a store error is asked again the same way.
import { isStoreUnavailable } from "../http/store-unavailable.ts";
import type { IdempotencyClaims } from "./idempotency.ts";
import type { Reconciler } from "./reconciler.ts";
import type { TestQuota } from "./test-quota.ts";

type Handover = Pick<Reconciler, "giveBack">;

/** Runs `step`; on a store error hands `giveBack` to the reconciler, then throws the error on. */
async function orGiveBack<T>(step: () => Promise<T>, reconciler: Handover, requestId: string, what: "idempotency key" | "free call", giveBack: () => Promise<unknown>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (isStoreUnavailable(err)) reconciler.giveBack(requestId, giveBack, what);
    throw err;
  }
}

/** The claims, with a claim or a forget that met a store error given back by the reconciler. */
export function claimsGivenBack(store: IdempotencyClaims, reconciler: Handover): IdempotencyClaims {
  return {
    claim: (c) => orGiveBack(() => store.claim(c), reconciler, c.requestId, "idempotency key", () => store.abandon(c)),
    complete: (c) => store.complete(c),
    countReplay: (c) => store.countReplay(c),
    forget: (c) => orGiveBack(() => store.forget(c), reconciler, c.requestId, "idempotency key", () => store.abandon(c)),
    abandon: (c) => store.abandon(c),
  };
}

type TestCalls = Pick<TestQuota, "consumeTestCall" | "refundTestCall" | "abandonTestCall">;

/** The free calls, with a consume or a refund that met a store error given back by the reconciler. */
export function testCallsGivenBack(quota: TestCalls, reconciler: Handover): Pick<TestQuota, "consumeTestCall" | "refundTestCall"> {
  return {
    consumeTestCall: (q) => {
      const requestId = q.requestId;
      if (requestId === undefined) return quota.consumeTestCall(q);
      return orGiveBack(() => quota.consumeTestCall(q), reconciler, requestId, "free call", () => quota.abandonTestCall({ requestId, orgId: q.orgId }));
    },
    refundTestCall: (q) => {
      const requestId = q.requestId;
      if (requestId === undefined) return quota.refundTestCall(q);
      return orGiveBack(() => quota.refundTestCall(q), reconciler, requestId, "free call", () => quota.abandonTestCall({ requestId, orgId: q.orgId }));
    },
  };
}
