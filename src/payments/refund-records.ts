// Our record of each refund (migrations/0010 `refunds`) and the money it moves, for
// both kinds: ours (refunds.ts: recorded 'requested' and taken off the balance before
// the provider is called) and one the provider reports that we did not ask for (made in
// its dashboard: taken off when first seen). The provider's later word moves the record
// on: pending → succeeded (nothing more moves), or failed / canceled (the money comes
// back, once). Every write here runs in the caller's transaction, with the refund's
// top-up row locked first (the order everywhere: top-up, refund, organization).
import type { Billing } from "../billing/index.ts";
import { randomBase62, type Db } from "../db/index.ts";
import type { ProviderRefund, RefundStatus } from "./provider.ts";

export type RefundState = "requested" | RefundStatus;

export interface RefundRecord {
  refundId: string;
  orgId: string;
  topupId: string;
  amountKrw: number;
  origin: "operator" | "provider";
  state: RefundState;
  providerRef: string | null;
  sentAt: number | null;
  createdAt: number;
}

interface RefundRow {
  refund_id: string;
  org_id: string;
  topup_id: string;
  amount_krw: number;
  origin: "operator" | "provider";
  state: RefundState;
  provider_ref: string | null;
  sent_at: number | null;
  created_at: number;
}

export const REFUND_COLUMNS = "refund_id, org_id, topup_id, amount_krw, origin, state, provider_ref, sent_at, created_at";

export const toRefundRecord = (r: RefundRow): RefundRecord => ({
  refundId: r.refund_id,
  orgId: r.org_id,
  topupId: r.topup_id,
  amountKrw: r.amount_krw,
  origin: r.origin,
  state: r.state,
  providerRef: r.provider_ref,
  sentAt: r.sent_at,
  createdAt: r.created_at,
});

export const newRefundId = (): string => `rfd_${randomBase62(22)}`;

/** Whether a refund in this state has its money off the balance. */
export const isTakenOff = (s: RefundState): boolean => s !== "failed" && s !== "canceled";

/**
 * Where a report moves a refund. failed and canceled are final (the money is back);
 * succeeded may still fail (Stripe documents refunds that fail after succeeding); a
 * report of an earlier state that arrives late (pending after succeeded) changes nothing.
 */
function nextState(from: RefundState, to: RefundStatus): RefundState | undefined {
  if (from === to || !isTakenOff(from)) return undefined;
  if (from === "succeeded" && to === "pending") return undefined;
  return to;
}

/** What a report did to the record. */
export type RefundChange = "refund_pending" | "refund_succeeded" | "refund_returned" | "unchanged";

export function createRefundBook(billing: Pick<Billing, "enterMovement">, now: () => number) {
  async function find(tx: Db, where: "refund_id" | "provider_ref", value: string): Promise<RefundRecord | null> {
    const rows = await tx.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE ${where} = $1 FOR UPDATE`, [value]);
    return rows[0] ? toRefundRecord(rows[0]) : null;
  }

  /** The top-up's refunded_krw as its refunds have it (money off the balance), within its amount. */
  async function syncRefunded(tx: Db, topupId: string): Promise<void> {
    await tx.query(
      `UPDATE topups SET refunded_krw = LEAST(amount_krw, (SELECT coalesce(sum(amount_krw), 0) FROM refunds
          WHERE topup_id = $1 AND state NOT IN ('failed', 'canceled'))) WHERE topup_id = $1`,
      [topupId],
    );
  }

  /**
   * A new record, its money taken off the balance when its state says so. Ours are
   * 'requested' and stop at the open holds (floor "holds"): a failure answered here
   * leaves the caller's transaction to roll back. The provider's own are entered
   * whatever the balance: the money has left already.
   */
  async function insert(
    tx: Db,
    r: { orgId: string; topupId: string; amountKrw: number; origin: RefundRecord["origin"]; state: RefundState; providerRef?: string; failure?: string; note: string },
  ): Promise<{ ok: true; record: RefundRecord } | { ok: false; title: string }> {
    const refundId = newRefundId();
    const at = new Date(now());
    const rows = await tx.query<RefundRow>(
      `INSERT INTO refunds (refund_id, org_id, topup_id, amount_krw, origin, state, provider_ref, failure, created_at, sent_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $9) RETURNING ${REFUND_COLUMNS}`,
      [refundId, r.orgId, r.topupId, r.amountKrw, r.origin, r.state, r.providerRef ?? null, r.failure ?? null, at, r.origin === "operator" ? at : null],
    );
    if (isTakenOff(r.state)) {
      const floor = r.origin === "operator" ? "holds" : "none";
      const e = await billing.enterMovement(r.orgId, "refund", r.amountKrw, refundId, r.note, { within: tx, floor });
      if (!e.ok) return { ok: false, title: e.title ?? e.code };
    }
    await syncRefunded(tx, r.topupId);
    return { ok: true, record: toRefundRecord(rows[0]!) };
  }

  /**
   * Moves `rec` to what the provider reports (or, without `ref`, to its refusal of our
   * request: no refund was made); money that comes back is entered once.
   */
  async function apply(tx: Db, rec: RefundRecord, report: Pick<ProviderRefund, "status" | "failure"> & { ref?: string }): Promise<RefundChange> {
    const to = nextState(rec.state, report.status);
    if (rec.providerRef === null && report.ref !== undefined) await tx.query("UPDATE refunds SET provider_ref = $2 WHERE refund_id = $1", [rec.refundId, report.ref]);
    if (to === undefined) return "unchanged";
    await tx.query("UPDATE refunds SET state = $2, failure = $3, updated_at = $4 WHERE refund_id = $1", [
      rec.refundId,
      to,
      report.failure?.slice(0, 200) ?? null,
      new Date(now()),
    ]);
    if (isTakenOff(to)) return to === "pending" ? "refund_pending" : "refund_succeeded";
    const e = await billing.enterMovement(rec.orgId, "refund_returned", rec.amountKrw, rec.refundId, `refund ${rec.refundId} ${to} at the provider`, { within: tx, floor: "none" });
    // Rolls the whole event back: the provider's next delivery finds it undone.
    if (!e.ok) throw new Error(`refund ${rec.refundId} ${to} but not given back: ${e.title ?? e.code}`);
    await syncRefunded(tx, rec.topupId);
    return "refund_returned";
  }

  return { find, insert, apply };
}

export type RefundBook = ReturnType<typeof createRefundBook>;
