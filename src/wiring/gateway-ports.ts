// Adapts the keys, billing and accounts services to the narrow GatewayPorts shape.
import type { Accounts } from "../accounts/index.ts";
import { productStatusOf } from "../accounts/product-status.ts";
import type { Billing, RequestLog, TestQuota } from "../billing/index.ts";
import { notifyLowBalance } from "../billing/low-balance.ts";
import { readSpendAllowance, spendAllowanceOf } from "../billing/spend-allowance.ts";
import { createRecentSpend } from "../billing/recent-spend.ts";
import type { Mailer } from "../mail/index.ts";
import type { Db } from "../db/index.ts";
import type { IdempotencyPort } from "../gateway/idempotency.ts";
import type { GatewayPorts } from "../gateway/ports.ts";
import type { KeyService, LookupResult } from "../keys/index.ts";

export function gatewayPorts(s: {
  keys: KeyService;
  billing: Billing;
  accounts: Accounts;
  testQuota: TestQuota;
  requestLog: RequestLog;
  db: Db;
  idempotency: IdempotencyPort;
  now: () => number;
  mailer: Mailer;
  config: { PUBLIC_URL?: string };
}, log: (e: Record<string, unknown>) => void = () => {}): GatewayPorts {
  // X-RateLimit-* on a live key's uncharged answers, without a read per refusal. Money
  // moved through these ports is forgotten once it is visible (recent-spend.ts).
  const recent = createRecentSpend();
  return {
    lookupKey: async (text) => toKeyLookup(await s.keys.lookup(text)),
    touchKey: (keyId) => s.keys.touch(keyId),
    async reserve(h) {
      recent.reserving(h.orgId);
      let r: Awaited<ReturnType<Billing["reserve"]>>;
      try {
        r = await s.billing.reserve(h);
      } catch (err) {
        recent.reserveEnded(h.orgId, "unknown"); // it may have reserved
        throw err;
      }
      recent.reserveEnded(h.orgId, r.ok ? { appId: h.appId, amountKrw: h.amountKrw, now: s.now() } : "none");
      return r;
    },
    async capture(requestId, amountKrw, key, logRow) {
      let c: Awaited<ReturnType<Billing["capture"]>>;
      try {
        c = await s.billing.capture(requestId, amountKrw, logRow);
      } finally {
        recent.forgetOrg(key.orgId);
      }
      if (!c.ok) return c;
      recent.remember(key.orgId, key.appId, c.spendAfter, c.spendAfter.at, recent.reading());
      const r = {
        ok: true as const,
        chargedKrw: c.chargedKrw,
        balanceKrw: c.balanceKrw,
        allowance: spendAllowanceOf(c.spendAfter, key.spendLimits, c.spendAfter.at),
        logged: c.logged,
      };
      if (!key.lowBalanceWatched) return r;
      // The low-balance e-mail never fails or repeats the paid call it follows.
      await notifyLowBalance({ db: s.db, mailer: s.mailer, publicUrl: s.config.PUBLIC_URL, log }, requestId).catch((err: unknown) =>
        log({ level: "warn", msg: "low-balance check failed", requestId, err: err instanceof Error ? err.message : String(err) }),
      );
      return r;
    },
    async release(requestId) {
      try {
        await s.billing.release(requestId);
      } finally {
        recent.forgetAll(); // the hold's org is not known here; releases are the rare case
      }
    },
    async balances(orgId) {
      const b = await s.billing.balances(orgId);
      return { balanceKrw: b?.balanceKrw ?? 0, availableKrw: b?.availableKrw ?? 0 };
    },
    consumeTestCall: (q) => s.testQuota.consumeTestCall(q),
    refundTestCall: (q) => s.testQuota.refundTestCall(q),
    testCallsRemaining: (q) => s.testQuota.testCallsRemaining(q),
    spendAllowance: (q) => readSpendAllowance(s.db, { ...q, now: s.now() }, recent),
    logRequest: (row) => s.requestLog.logRequest(row),
    idempotency: s.idempotency,
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
