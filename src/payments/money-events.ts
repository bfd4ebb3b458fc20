// Money the provider moves after a payment, as its events report it (docs/DECISIONS.md
// "Payments"): disputes, refunds (ours and those made outside our API), a payment
// refunded. Each is applied inside settle's transaction (topups.ts), after the event's
// own row, with the top-up row locked first: one event is acted on once, and each
// movement of money is entered once (the ledger's kind and reference, migrations/0010)
// however often and in whatever order its events come.
//
// A dispute withholds its amount as soon as any event about it arrives, whatever the
// balance (the provider has taken the money: the balance may go below zero and paid
// calls are then refused 402); `won` (and an inquiry closed without a chargeback,
// `warning_closed`) gives it back once; `lost` keeps it off. A closing status is final:
// a late `created` or `updated` after it changes nothing.
import type { Billing } from "../billing/index.ts";
import type { Db } from "../db/index.ts";
import type { PaymentEvent, ProviderDispute, ProviderRefund } from "./provider.ts";
import type { RefundBook } from "./refund-records.ts";
import type { SettleOutcome } from "./topups.ts";

/** Dispute statuses after which nothing changes; the first two give the money back. */
export const DISPUTE_RETURNED: ReadonlySet<string> = new Set(["won", "warning_closed"]);
const DISPUTE_FINAL = new Set([...DISPUTE_RETURNED, "lost"]);

interface PaidTopup {
  topup_id: string;
  org_id: string;
}

export function createMoneyEvents(billing: Pick<Billing, "enterMovement">, book: RefundBook, now: () => number) {
  /** The top-up whose payment this is, locked; only top-ups that took money are ever refunded or disputed. */
  async function topupOf(tx: Db, providerName: string, paymentRef: string): Promise<PaidTopup | undefined> {
    const rows = await tx.query<PaidTopup>(
      "SELECT topup_id, org_id FROM topups WHERE provider = $1 AND payment_ref = $2 AND takes_money FOR UPDATE",
      [providerName, paymentRef],
    );
    return rows[0];
  }

  async function dispute(tx: Db, providerName: string, d: ProviderDispute): Promise<SettleOutcome> {
    const t = await topupOf(tx, providerName, d.paymentRef);
    if (!t) return { outcome: "unknown", reason: `no top-up of ours was paid by ${d.paymentRef}` };
    if (d.currency !== "krw") return { outcome: "refused", topupId: t.topup_id, reason: `a dispute in ${d.currency} of a payment in krw` };
    const at = new Date(now());
    const known = await tx.query<{ status: string; amount_krw: number }>("SELECT status, amount_krw FROM disputes WHERE dispute_ref = $1 FOR UPDATE", [d.ref]);
    const was = known[0];
    const status = was && DISPUTE_FINAL.has(was.status) ? was.status : d.status;
    const amount = was?.amount_krw ?? d.amount;
    if (!was) {
      await tx.query(
        "INSERT INTO disputes (dispute_ref, org_id, topup_id, amount_krw, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)",
        [d.ref, t.org_id, t.topup_id, amount, status, at],
      );
    } else if (was.status !== status) {
      await tx.query("UPDATE disputes SET status = $2, updated_at = $3 WHERE dispute_ref = $1", [d.ref, status, at]);
    }
    const base = { topupId: t.topup_id, orgId: t.org_id };
    const withheld = await move(tx, t.org_id, "dispute", amount, d.ref, `dispute ${d.ref} of top-up ${t.topup_id}`);
    if (DISPUTE_RETURNED.has(status)) {
      const back = await move(tx, t.org_id, "dispute_returned", amount, d.ref, `dispute ${d.ref} ${status}`);
      if (back.entered) return { outcome: "dispute_won", ...base, balanceKrw: back.balanceKrw };
    }
    if (withheld.entered) return { outcome: "disputed", ...base, balanceKrw: withheld.balanceKrw };
    if (status === "lost" && was?.status !== "lost") return { outcome: "dispute_lost", ...base, balanceKrw: withheld.balanceKrw };
    return { outcome: "duplicate", topupId: t.topup_id, reason: `dispute ${d.ref} is ${status} already` };
  }

  async function move(tx: Db, orgId: string, kind: "dispute" | "dispute_returned", amount: number, ref: string, note: string) {
    const e = await billing.enterMovement(orgId, kind, amount, ref, note, { within: tx, floor: "none" });
    // Rolls the event back with it: the provider's next delivery finds it undone.
    if (!e.ok) throw new Error(`${kind} ${ref} not entered: ${e.title ?? e.code}`);
    return e;
  }

  /** One refund as the provider reports it: ours moves on; one we never asked for is taken off. */
  async function refund(tx: Db, providerName: string, r: ProviderRefund): Promise<SettleOutcome> {
    const t = await topupOf(tx, providerName, r.paymentRef);
    if (!t) return { outcome: "unknown", reason: `no top-up of ours was paid by ${r.paymentRef}` };
    if (r.currency !== "krw") return { outcome: "refused", topupId: t.topup_id, reason: `a refund in ${r.currency} of a payment in krw` };
    const rec = (r.refundId ? await book.find(tx, "refund_id", r.refundId) : null) ?? (await book.find(tx, "provider_ref", r.ref));
    const base = { topupId: t.topup_id, orgId: t.org_id };
    if (!rec) {
      // Metadata naming a refund of ours we have no record of: not ours to believe.
      if (r.refundId) return { outcome: "unknown", topupId: t.topup_id, reason: `refund ${r.ref} names ${r.refundId}, which we have no record of` };
      const made = await book.insert(tx, { ...base, amountKrw: r.amount, origin: "provider", state: r.status, providerRef: r.ref, failure: r.failure, note: `refund ${r.ref} made at the provider (top-up ${t.topup_id})` });
      if (!made.ok) throw new Error(`refund ${r.ref} not entered: ${made.title}`);
      return made.record.state === "failed" || made.record.state === "canceled" ? { outcome: "ignored", ...base, reason: `refund ${r.ref} is ${r.status}: nothing moved` } : { outcome: "refunded", ...base };
    }
    if (rec.topupId !== t.topup_id || rec.amountKrw !== r.amount || (rec.providerRef !== null && rec.providerRef !== r.ref)) {
      return { outcome: "refused", topupId: t.topup_id, reason: `refund ${r.ref} (${r.amount} krw) is not our refund ${rec.refundId} (${rec.amountKrw} krw of ${rec.topupId})` };
    }
    const change = await book.apply(tx, rec, r);
    return change === "unchanged" ? { outcome: "duplicate", ...base, reason: `refund ${rec.refundId} is ${rec.state} already` } : { outcome: change, ...base };
  }

  /** A payment refunded: each of its refunds (all of them, read by settle when the event did not carry them). */
  async function refunded(tx: Db, providerName: string, refunds: ProviderRefund[]): Promise<SettleOutcome> {
    let last: SettleOutcome = { outcome: "duplicate", reason: "every refund of the payment is entered already" };
    let moved: SettleOutcome | undefined;
    for (const r of refunds) {
      last = await refund(tx, providerName, r);
      if (last.outcome !== "duplicate") moved ??= last;
    }
    return moved ?? last;
  }

  /** Applies a dispute, refund or charge_refunded event (`refunds`: the payment's refunds for the last). */
  function apply(tx: Db, providerName: string, ev: Extract<PaymentEvent, { kind: "dispute" | "refund" | "charge_refunded" }>, refunds: ProviderRefund[] = []) {
    if (ev.kind === "dispute") return dispute(tx, providerName, ev.dispute);
    if (ev.kind === "refund") return refund(tx, providerName, ev.refund);
    return refunded(tx, providerName, refunds);
  }

  return { apply };
}
