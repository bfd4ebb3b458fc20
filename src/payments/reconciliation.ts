// The reconciliation an operator runs (GET /admin/v1/reconciliation): the provider's
// own records of payments, refunds and disputes, read through its API, against the
// ledger's entries for them, per organization, with every difference named.
//
// What each provider record means for the ledger: a payment taken, a credit of its
// amount (the top-up it paid); a refund not failed or canceled, that amount off (failed
// or canceled: nothing, or off and back); a dispute, its amount off unless won (or an
// inquiry closed without a chargeback). The ledger's side is the sum of its entries
// naming the movement (ledger_entries.money_ref, migrations/0010), so a hand-edited or
// missing entry shows as a difference even where our records (top-ups, refunds,
// disputes) say the money moved.
//
// The range: records the provider created, or we recorded, within [from, to). The
// provider is read MATCH_MARGIN_MS wider on both sides so a movement near an edge
// finds its counterpart (our record of it can trail the provider's by as long as the
// provider resends its webhook); only what falls within the range is reported.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { DISPUTE_RETURNED } from "./money-events.ts";
import type { PaymentProvider, ProviderRecords } from "./provider.ts";
import { isTakenOff } from "./refund-records.ts";

/** The longest range one reconciliation covers. */
export const RECONCILIATION_MAX_DAYS = 31;
/** Stripe resends an event for up to three days. */
export const MATCH_MARGIN_MS = 3 * 24 * 3600_000;

export type MoneyKind = "payment" | "refund" | "dispute";

export interface Difference {
  kind: MoneyKind;
  orgId: string | null;
  /** The provider's record (Stripe: ch_…, re_…, du_…), when it has one. */
  providerRef: string | null;
  /** Ours: the top-up, refund or dispute it was entered under, when there is one. */
  ledgerRef: string | null;
  /** What the provider's record says the ledger holds for it (credit > 0, money off < 0). */
  providerKrw: number;
  /** What the ledger holds for it. */
  ledgerKrw: number;
  reason: string;
}

interface Totals {
  paymentsKrw: number;
  refundsKrw: number;
  disputesKrw: number;
}

export interface OrgReconciliation {
  orgId: string;
  provider: Totals;
  ledger: Totals;
  differences: Difference[];
}

export interface Reconciliation {
  from: string;
  to: string;
  provider: string;
  organizations: OrgReconciliation[];
  /** Provider records no organization of ours can be named for. */
  unmatched: Difference[];
  differenceCount: number;
}

interface TopupRow {
  topup_id: string;
  org_id: string;
  payment_ref: string | null;
  confirmed_at: number | null;
}
interface RefundRow {
  refund_id: string;
  org_id: string;
  provider_ref: string | null;
  state: string;
  created_at: number;
}
interface DisputeRow {
  dispute_ref: string;
  org_id: string;
  created_at: number;
}

const MONEY_KINDS = ["credit", "refund", "refund_returned", "dispute", "dispute_returned"];
const KIND_OF_ENTRY: Record<string, MoneyKind> = { credit: "payment", refund: "refund", refund_returned: "refund", dispute: "dispute", dispute_returned: "dispute" };

export function createReconciliation({ db, provider, log }: { db: Db; provider: PaymentProvider | undefined; log: (e: Record<string, unknown>) => void }) {
  async function reconcile(fromMs: number, toMs: number): Promise<({ ok: true } & Reconciliation) | Failure> {
    const lo = fromMs - MATCH_MARGIN_MS;
    const hi = toMs + MATCH_MARGIN_MS;
    let seen: ProviderRecords = { payments: [], refunds: [], disputes: [] };
    if (provider?.records) {
      const read = await provider.records(lo, hi);
      if (!read.ok) return read;
      seen = read;
    }
    const inRange = (ms: number | null) => ms !== null && ms >= fromMs && ms < toMs;
    const window = [new Date(lo), new Date(hi)];
    const paymentRefs = [...new Set([...seen.payments, ...seen.refunds, ...seen.disputes].map((x) => x.paymentRef))];

    const topups = await db.query<TopupRow>(
      `SELECT topup_id, org_id, payment_ref, confirmed_at FROM topups
        WHERE takes_money AND state = 'confirmed' AND (payment_ref = ANY($1::text[]) OR (confirmed_at >= $2 AND confirmed_at < $3))`,
      [paymentRefs, ...window],
    );
    const refunds = await db.query<RefundRow>(
      `SELECT refund_id, org_id, provider_ref, state, created_at FROM refunds
        WHERE refund_id = ANY($1::text[]) OR provider_ref = ANY($2::text[]) OR (created_at >= $3 AND created_at < $4)`,
      [seen.refunds.flatMap((r) => (r.refundId ? [r.refundId] : [])), seen.refunds.map((r) => r.ref), ...window],
    );
    const disputes = await db.query<DisputeRow>(
      "SELECT dispute_ref, org_id, created_at FROM disputes WHERE dispute_ref = ANY($1::text[]) OR (created_at >= $2 AND created_at < $3)",
      [seen.disputes.map((d) => d.ref), ...window],
    );
    const refs = [...topups.map((t) => t.topup_id), ...refunds.map((r) => r.refund_id), ...disputes.map((d) => d.dispute_ref)];
    // The ledger's entries for those movements, and every movement entry in the range (an entry nothing accounts for).
    const entries = await db.query<{ org_id: string; kind: string; money_ref: string; krw: number; in_range: boolean }>(
      `SELECT org_id, kind, money_ref, sum(amount_krw)::bigint AS krw, bool_or(created_at >= $3 AND created_at < $4) AS in_range
         FROM ledger_entries
        WHERE kind = ANY($1::text[]) AND (money_ref = ANY($2::text[]) OR (money_ref IS NOT NULL AND created_at >= $3 AND created_at < $4))
        GROUP BY org_id, kind, money_ref`,
      [MONEY_KINDS, refs, new Date(fromMs), new Date(toMs)],
    );
    const sandboxCredits = new Set(
      (await db.query<{ topup_id: string }>("SELECT topup_id FROM topups WHERE NOT takes_money AND topup_id = ANY($1::text[])", [entries.filter((e) => e.kind === "credit").map((e) => e.money_ref)])).map((r) => r.topup_id),
    );

    const ledger = new Map<string, number>();
    for (const e of entries) ledger.set(`${KIND_OF_ENTRY[e.kind]} ${e.money_ref}`, (ledger.get(`${KIND_OF_ENTRY[e.kind]} ${e.money_ref}`) ?? 0) + Number(e.krw));
    const held = (kind: MoneyKind, ref: string | undefined) => (ref === undefined ? 0 : (ledger.get(`${kind} ${ref}`) ?? 0));
    const accounted = new Set<string>();

    const orgs = new Map<string, OrgReconciliation>();
    const unmatched: Difference[] = [];
    const orgOf = (orgId: string) => {
      let o = orgs.get(orgId);
      if (!o) orgs.set(orgId, (o = { orgId, provider: { paymentsKrw: 0, refundsKrw: 0, disputesKrw: 0 }, ledger: { paymentsKrw: 0, refundsKrw: 0, disputesKrw: 0 }, differences: [] }));
      return o;
    };
    const total: Record<MoneyKind, keyof Totals> = { payment: "paymentsKrw", refund: "refundsKrw", dispute: "disputesKrw" };
    /** One movement compared: counted in its org's totals, and a difference when the two sides disagree. */
    const compare = (d: Omit<Difference, "reason">, reason: string) => {
      if (d.ledgerRef) accounted.add(`${d.kind} ${d.ledgerRef}`);
      if (d.orgId === null) {
        if (d.providerKrw !== d.ledgerKrw) unmatched.push({ ...d, reason });
        return;
      }
      const o = orgOf(d.orgId);
      o.provider[total[d.kind]] += Math.abs(d.providerKrw);
      o.ledger[total[d.kind]] += Math.abs(d.ledgerKrw);
      if (d.providerKrw !== d.ledgerKrw) o.differences.push({ ...d, reason });
    };

    const topupByPayment = new Map(topups.filter((t) => t.payment_ref).map((t) => [t.payment_ref!, t]));
    for (const p of seen.payments) {
      if (!p.paid) continue;
      const t = topupByPayment.get(p.paymentRef);
      if (!inRange(p.createdMs) && !inRange(t?.confirmed_at ?? null)) continue;
      const expected = p.currency === "krw" ? p.amount : 0;
      compare(
        { kind: "payment", orgId: t?.org_id ?? null, providerRef: p.ref, ledgerRef: t?.topup_id ?? null, providerKrw: expected, ledgerKrw: held("payment", t?.topup_id) },
        !t ? `paid at the provider (${p.paymentRef}); no top-up of ours names this payment` : p.currency !== "krw" ? `paid in ${p.currency}` : "the credit is not the payment",
      );
    }
    for (const t of topups) {
      if (!inRange(t.confirmed_at) || accounted.has(`payment ${t.topup_id}`)) continue;
      compare({ kind: "payment", orgId: t.org_id, providerRef: null, ledgerRef: t.topup_id, providerKrw: 0, ledgerKrw: held("payment", t.topup_id) }, `credited, but the provider lists no payment ${t.payment_ref}`);
    }

    const refundById = new Map(refunds.map((r) => [r.refund_id, r]));
    const refundByRef = new Map(refunds.filter((r) => r.provider_ref).map((r) => [r.provider_ref!, r]));
    for (const r of seen.refunds) {
      const rec = (r.refundId ? refundById.get(r.refundId) : undefined) ?? refundByRef.get(r.ref);
      if (!inRange(r.createdMs) && !inRange(rec?.created_at ?? null)) continue;
      const expected = r.currency === "krw" && isTakenOff(r.status) ? -r.amount : 0;
      compare(
        { kind: "refund", orgId: rec?.org_id ?? topupByPayment.get(r.paymentRef)?.org_id ?? null, providerRef: r.ref, ledgerRef: rec?.refund_id ?? null, providerKrw: expected, ledgerKrw: held("refund", rec?.refund_id) },
        !rec ? `refunded at the provider (${r.status}); the ledger has no record of it` : `${r.status} at the provider: the ledger should hold ${expected} KRW for it`,
      );
    }
    for (const rec of refunds) {
      if (!inRange(rec.created_at) || accounted.has(`refund ${rec.refund_id}`)) continue;
      const why = rec.state === "requested" ? "in flight: the provider lists no such refund yet (a completion asked again settles it)" : `${rec.state} in our records, but the provider lists no such refund`;
      compare({ kind: "refund", orgId: rec.org_id, providerRef: rec.provider_ref, ledgerRef: rec.refund_id, providerKrw: 0, ledgerKrw: held("refund", rec.refund_id) }, why);
    }

    const disputeByRef = new Map(disputes.map((d) => [d.dispute_ref, d]));
    for (const d of seen.disputes) {
      const rec = disputeByRef.get(d.ref);
      if (!inRange(d.createdMs) && !inRange(rec?.created_at ?? null)) continue;
      const expected = d.currency === "krw" && !DISPUTE_RETURNED.has(d.status) ? -d.amount : 0;
      compare(
        { kind: "dispute", orgId: rec?.org_id ?? topupByPayment.get(d.paymentRef)?.org_id ?? null, providerRef: d.ref, ledgerRef: rec || ledger.has(`dispute ${d.ref}`) ? d.ref : null, providerKrw: expected, ledgerKrw: held("dispute", d.ref) },
        `${d.status} at the provider: the ledger should hold ${expected} KRW for it`,
      );
    }
    for (const rec of disputes) {
      if (!inRange(rec.created_at) || accounted.has(`dispute ${rec.dispute_ref}`)) continue;
      compare({ kind: "dispute", orgId: rec.org_id, providerRef: rec.dispute_ref, ledgerRef: rec.dispute_ref, providerKrw: 0, ledgerKrw: held("dispute", rec.dispute_ref) }, "the provider lists no such dispute");
    }

    // Entries in the range that none of the above accounted for (not sandbox credit, which is never money).
    for (const e of entries) {
      const kind = KIND_OF_ENTRY[e.kind]!;
      if (!e.in_range || accounted.has(`${kind} ${e.money_ref}`) || (e.kind === "credit" && sandboxCredits.has(e.money_ref))) continue;
      accounted.add(`${kind} ${e.money_ref}`);
      compare({ kind, orgId: e.org_id, providerRef: null, ledgerRef: e.money_ref, providerKrw: 0, ledgerKrw: held(kind, e.money_ref) }, "a ledger entry no record of the provider accounts for");
    }

    const organizations = [...orgs.values()].sort((a, b) => (a.orgId < b.orgId ? -1 : 1));
    const differenceCount = unmatched.length + organizations.reduce((n, o) => n + o.differences.length, 0);
    log({ level: differenceCount ? "warn" : "info", msg: "reconciliation", from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), organizations: organizations.length, differenceCount });
    return { ok: true, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), provider: provider?.name ?? "none", organizations, unmatched, differenceCount };
  }

  return { reconcile };
}

export type ReconciliationService = ReturnType<typeof createReconciliation>;

/** The range a reconciliation may cover, or why not. */
export function checkRange(fromMs: number, toMs: number): Failure | undefined {
  if (!(toMs > fromMs)) return fail("invalid_parameter", "to must be later than from");
  if (toMs - fromMs > RECONCILIATION_MAX_DAYS * 24 * 3600_000) return fail("invalid_parameter", `A reconciliation covers at most ${RECONCILIATION_MAX_DAYS} days: ask for a shorter range`);
  return undefined;
}
