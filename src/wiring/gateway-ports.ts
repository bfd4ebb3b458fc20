// Adapts the keys, billing and accounts services to the narrow GatewayPorts shape.
import type { Accounts } from "../accounts/index.ts";
import type { Billing, RequestLog, TestQuota } from "../billing/index.ts";
import type { IdempotencyPort } from "../gateway/idempotency.ts";
import type { GatewayPorts } from "../gateway/ports.ts";
import type { KeyService } from "../keys/index.ts";

export function gatewayPorts(s: {
  keys: KeyService;
  billing: Billing;
  accounts: Accounts;
  testQuota: TestQuota;
  requestLog: RequestLog;
  idempotency: IdempotencyPort;
}): GatewayPorts {
  return {
    async lookupKey(text) {
      const r = await s.keys.lookup(text);
      if (!r.ok) return { ok: false, code: r.code };
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
        },
      };
    },
    touchKey: (keyId) => s.keys.touch(keyId),
    productStatus: () => s.accounts.getProductStatus(),
    reserve: (h) => s.billing.reserve(h),
    async capture(requestId, amountKrw) {
      const r = await s.billing.capture(requestId, amountKrw);
      if (!r.ok) throw new Error(`capture refused: ${r.code} ${r.title ?? ""}`);
      return { chargedKrw: r.chargedKrw, balanceKrw: r.balanceKrw };
    },
    async release(requestId) {
      await s.billing.release(requestId);
    },
    async balances(orgId) {
      const b = await s.billing.balances(orgId);
      return { balanceKrw: b?.balanceKrw ?? 0, availableKrw: b?.availableKrw ?? 0 };
    },
    consumeTestCall: (q) => s.testQuota.consumeTestCall(q),
    refundTestCall: (q) => s.testQuota.refundTestCall(q),
    testCallsRemaining: (q) => s.testQuota.testCallsRemaining(q),
    logRequest: (row) => s.requestLog.logRequest(row),
    idempotency: s.idempotency,
  };
}
