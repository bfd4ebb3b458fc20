// Adapts the keys, test-quota and request-log services to the narrow GatewayPorts
// shape. The money of a paid call is billing's own adapter (src/billing/call-money.ts),
// built beside these in app.ts.
import { productStatusOf } from "../accounts/product-status.ts";
import type { RequestLog, TestQuota } from "../billing/index.ts";
import { claimsGivenBack, testCallsGivenBack } from "../billing/given-back.ts";
import type { Reconciler } from "../billing/reconciler.ts";
import type { IdempotencyPort } from "../gateway/idempotency.ts";
import type { GatewayPorts } from "../gateway/ports.ts";
import type { KeyService, LookupResult } from "../keys/index.ts";

export function gatewayPorts(s: {
  keys: KeyService;
  testQuota: TestQuota;
  requestLog: RequestLog;
  idempotency: IdempotencyPort;
  /** Gives back a claim or free call whose statement met a store error. */
  reconciler: Pick<Reconciler, "giveBack">;
}): GatewayPorts {
  const testCalls = testCallsGivenBack(s.testQuota, s.reconciler);
  return {
    lookupKey: async (text) => toKeyLookup(await s.keys.lookup(text)),
    touchKey: (keyId) => s.keys.touch(keyId),
    consumeTestCall: (q) => testCalls.consumeTestCall(q),
    refundTestCall: (q) => testCalls.refundTestCall(q),
    testCallsRemaining: (q) => s.testQuota.testCallsRemaining(q),
    logRequest: (row) => s.requestLog.logRequest(row),
    idempotency: claimsGivenBack(s.idempotency, s.reconciler),
  };
}

/** The key service's answer in the gateway's shape (also used for the playground's test key). */
export function toKeyLookup(r: LookupResult): Awaited<ReturnType<GatewayPorts["lookupKey"]>> {
  if (!r.ok) return r.code === "key_suspended" ? { ok: false, code: r.code, owner: r.owner } : { ok: false, code: r.code };
  return {
    ok: true,
    key: {
      keyId: r.key.keyId,
      kind: r.key.kind,
      label: r.key.label,
      appId: r.app.appId,
      orgId: r.org.orgId,
      productEnabled: r.app.productEnabled,
      refundPending: r.org.refundPending,
      testQuota: r.org.testQuota,
      productStatus: productStatusOf(r.productStatus),
      spendLimits: { orgDailyKrw: r.org.dailyLimitKrw, appDailyKrw: r.app.dailyLimitKrw, appMonthlyKrw: r.app.monthlyLimitKrw },
      lowBalanceWatched: r.org.lowBalanceWatched,
    },
  };
}
