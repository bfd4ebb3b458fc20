// Paying money back (the operator completing a customer's refund request): only money a
// provider took for a top-up of this organization is ever paid back, through that
// provider, against the payments it took. Sandbox top-ups and operator credit are credit,
// never money: they are not refundable, and what is left of them stays as credit.
//
// Each top-up's share is first recorded: a refund row in state 'requested' and its
// ledger entry, in one transaction (refund-records.ts). Only then is the provider asked,
// under an idempotency key and with the row's ID in the refund's metadata. Its answer
// moves the row on (pending, succeeded; failed or canceled give the money back); a
// refund answered 'pending' is paid only when the provider's refund event says
// succeeded (money-events.ts). When the answer is lost (no answer, a 5xx) the row stays
// in flight, and a completion asked again, after any time, first looks the refund up at
// the provider by that ID: found, it is that refund; not found, it is asked for again
// under the same key. So nothing is paid twice, whether or not the provider still keeps
// the key (Stripe: at least 24 hours).
//
// A completion's amount counts the refunds it made before it failed: asked again with
// the same amount (or none), it pays only what is missing.
import type { Billing } from "../billing/index.ts";
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { DISPUTE_RETURNED } from "./money-events.ts";
import type { PaymentProvider, ProviderRefund } from "./provider.ts";
import { createRefundBook, isTakenOff, REFUND_COLUMNS, toRefundRecord, type RefundRecord, type RefundState } from "./refund-records.ts";

/**
 * How long after a refund was asked for the provider may still be answering it (Stripe's
 * calls time out after 20 s): a refund in flight that the provider does not list is
 * asked for again only after this, so the first request cannot still be on its way.
 */
export const REFUND_RESEND_AFTER_MS = 60_000;

export interface RefundDeps {
  db: Db;
  billing: Pick<Billing, "enterMovement">;
  provider: PaymentProvider | undefined;
  now: () => number;
  log: (e: Record<string, unknown>) => void;
}

/** One refund of a completion, as the operator's answer shows it. */
export interface RefundView {
  refundId: string;
  topupId: string;
  amountKrw: number;
  state: RefundState;
}

const view = (r: RefundRecord): RefundView => ({ refundId: r.refundId, topupId: r.topupId, amountKrw: r.amountKrw, state: r.state });

/** What is left to refund of a top-up: not refunded, and not withheld by a dispute that is not won. */
const LEFT_OF_TOPUP = `t.amount_krw - t.refunded_krw - coalesce((SELECT sum(d.amount_krw) FROM disputes d
   WHERE d.topup_id = t.topup_id AND d.status NOT IN (${[...DISPUTE_RETURNED].map((s) => `'${s}'`).join(", ")})), 0)`;

class RecordRefused extends Error {}

export function createRefunds({ db, billing, provider, now, log }: RefundDeps) {
  const book = createRefundBook(billing, now);

  /** Money the org paid in through a provider and has not had back (nor lost to a dispute). */
  async function refundableKrw(orgId: string): Promise<number> {
    const rows = await db.query<{ left: number | null }>(
      `SELECT sum(GREATEST(0, ${LEFT_OF_TOPUP})) AS left FROM topups t WHERE t.org_id = $1 AND t.state = 'confirmed' AND t.takes_money`,
      [orgId],
    );
    return Number(rows[0]?.left ?? 0);
  }

  /** The refunds of the completion in progress (made by earlier tries of it), oldest first. */
  async function openRun(orgId: string): Promise<RefundRecord[]> {
    const rows = await db.query<Parameters<typeof toRefundRecord>[0]>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE org_id = $1 AND origin = 'operator' AND completed_at IS NULL ORDER BY created_at, refund_id`,
      [orgId],
    );
    return rows.map(toRefundRecord);
  }

  /** The PaymentIntent a top-up's refunds are paid against. */
  async function paymentOf(topupId: string): Promise<string> {
    const rows = await db.query<{ payment_ref: string | null }>("SELECT payment_ref FROM topups WHERE topup_id = $1", [topupId]);
    const ref = rows[0]?.payment_ref;
    if (!ref) throw new Error(`top-up ${topupId} has a refund but names no payment`);
    return ref;
  }

  /** Applies the provider's report of `rec` in one transaction, top-up locked first. */
  async function record(rec: RefundRecord, report: Pick<ProviderRefund, "status" | "failure"> & { ref?: string }): Promise<RefundRecord> {
    return db.transaction(async (tx) => {
      await tx.query("SELECT 1 FROM topups WHERE topup_id = $1 FOR UPDATE", [rec.topupId]);
      const fresh = await book.find(tx, "refund_id", rec.refundId);
      if (!fresh) throw new Error(`refund ${rec.refundId} disappeared`);
      await book.apply(tx, fresh, report);
      return (await book.find(tx, "refund_id", rec.refundId))!;
    });
  }

  /** Asks the provider for `rec` (recorded before) and records its answer. */
  async function send(rec: RefundRecord, paymentRef: string): Promise<{ ok: true; record: RefundRecord } | Failure> {
    if (!provider) return fail("conflict", `Refund ${rec.refundId} needs a payment provider, and none is configured`);
    const r = await provider.refund({ paymentRef, amountKrw: rec.amountKrw, refundId: rec.refundId, idempotencyKey: `refund-${rec.refundId}` });
    if (r.ok) {
      if (r.refund.refundId !== undefined && r.refund.refundId !== rec.refundId) {
        log({ level: "error", msg: "provider refund names another refund", refundId: rec.refundId, refund: r.refund.ref });
        return fail("upstream_error", `The payment provider answered refund ${rec.refundId} with another refund; it stays in flight`);
      }
      const after = await record(rec, r.refund);
      log({ level: "info", msg: "refund asked", orgId: rec.orgId, topupId: rec.topupId, refundId: rec.refundId, amountKrw: rec.amountKrw, refundRef: r.refund.ref, state: after.state });
      if (!isTakenOff(after.state)) return fail("conflict", `The payment provider ${after.state} refund ${rec.refundId} of ${rec.amountKrw} KRW; it is back on the balance`);
      return { ok: true, record: after };
    }
    if (r.refused) {
      // The provider made no refund: the money comes back to the balance at once.
      await record(rec, { status: "failed", failure: r.title ?? r.code });
      return fail(r.code, `${r.title ?? "The payment provider refused the refund"}; the ${rec.amountKrw} KRW of refund ${rec.refundId} is back on the balance`);
    }
    log({ level: "warn", msg: "refund in flight", orgId: rec.orgId, refundId: rec.refundId, amountKrw: rec.amountKrw, reason: r.title });
    return fail(r.code, `${r.title ?? "The payment provider did not answer"}: refund ${rec.refundId} of ${rec.amountKrw} KRW is recorded as in flight; asking again finds it at the provider and pays nothing twice`);
  }

  /**
   * A refund in flight (its answer lost): the provider's own record of it if it has one,
   * else asked for again, once the first request cannot still be arriving.
   */
  async function settleInFlight(rec: RefundRecord): Promise<{ ok: true; record: RefundRecord } | Failure> {
    const paymentRef = await paymentOf(rec.topupId);
    if (provider?.refundsOf) {
      const listed = await provider.refundsOf({ paymentRef });
      if (!listed.ok) return listed;
      const found = listed.refunds.find((r) => r.refundId === rec.refundId);
      if (found) return { ok: true, record: await record(rec, found) };
    }
    const at = now();
    if (rec.sentAt !== null && at - rec.sentAt < REFUND_RESEND_AFTER_MS) {
      return fail("conflict", `Refund ${rec.refundId} of ${rec.amountKrw} KRW was asked for less than ${REFUND_RESEND_AFTER_MS / 1000} s ago and the payment provider has not answered: ask again in a minute`);
    }
    // One asker at a time: the stamp it read must still be the row's.
    const claimed = await db.query(
      "UPDATE refunds SET sent_at = $3 WHERE refund_id = $1 AND state = 'requested' AND sent_at IS NOT DISTINCT FROM $2 RETURNING refund_id",
      [rec.refundId, rec.sentAt === null ? null : new Date(rec.sentAt), new Date(at)],
    );
    if (claimed.length === 0) return fail("conflict", `Another completion is asking for refund ${rec.refundId} now: ask again in a minute`);
    return send(rec, paymentRef);
  }

  /** Records the next share of the top-ups, newest payment first; null when nothing is left. */
  async function recordShare(orgId: string, leftKrw: number, note: string): Promise<{ record: RefundRecord; paymentRef: string } | null | Failure> {
    const candidates = await db.query<{ topup_id: string; provider: string; payment_ref: string | null }>(
      `SELECT t.topup_id, t.provider, t.payment_ref FROM topups t
        WHERE t.org_id = $1 AND t.state = 'confirmed' AND t.takes_money AND ${LEFT_OF_TOPUP} > 0
        ORDER BY t.confirmed_at DESC, t.topup_id`,
      [orgId],
    );
    for (const t of candidates) {
      if (!provider || provider.name !== t.provider || !t.payment_ref) {
        return fail("conflict", `Top-up ${t.topup_id} was paid through ${t.provider}, which is not the configured payment provider`);
      }
      try {
        const rec = await db.transaction(async (tx) => {
          // The share is read again under the top-up's lock: two completions at once take different shares.
          const left = await tx.query<{ left: number }>(`SELECT ${LEFT_OF_TOPUP} AS left FROM topups t WHERE t.topup_id = $1 FOR UPDATE`, [t.topup_id]);
          const take = Math.min(leftKrw, Number(left[0]?.left ?? 0));
          if (take <= 0) return null;
          const made = await book.insert(tx, { orgId, topupId: t.topup_id, amountKrw: take, origin: "operator", state: "requested", note: `${note} (${t.topup_id})` });
          if (!made.ok) throw new RecordRefused(made.title);
          return made.record;
        });
        if (rec) return { record: rec, paymentRef: t.payment_ref };
      } catch (err) {
        if (err instanceof RecordRefused) return fail("conflict", err.message);
        throw err;
      }
    }
    return null;
  }

  /**
   * Completes a refund: the refunds in flight settled first, then `amountKrw` (default: all
   * that was paid in and is available) paid back, counting what earlier tries of this
   * completion paid. Answers the completion's refunds; a failure says what was paid so far.
   */
  async function complete(orgId: string, amountKrw: number | undefined, availableKrw: () => Promise<number>, note: string): Promise<{ ok: true; refunds: RefundView[]; refundedKrw: number } | Failure> {
    const paidSoFar = async () => (await openRun(orgId)).filter((r) => isTakenOff(r.state) && r.state !== "requested").reduce((n, r) => n + r.amountKrw, 0);
    const stopped = async (f: Failure): Promise<Failure> => fail(f.code, `${f.title ?? "The refund stopped"}; ${await paidSoFar()} KRW of this completion paid back so far`, f.retryAfter);
    for (const rec of (await openRun(orgId)).filter((r) => r.state === "requested")) {
      const settled = await settleInFlight(rec);
      if (!settled.ok) return stopped(settled);
    }
    const paidBefore = (await openRun(orgId)).filter((r) => isTakenOff(r.state)).reduce((n, r) => n + r.amountKrw, 0);
    const [available, paidIn] = [await availableKrw(), await refundableKrw(orgId)];
    const more = amountKrw === undefined ? Math.max(0, Math.min(available, paidIn)) : Math.max(0, amountKrw - paidBefore);
    if (more > available) return fail("conflict", "The refund is larger than the available balance");
    if (more > paidIn) {
      return fail("conflict", `Only ${paidIn} KRW was paid in through a payment provider and not paid back; operator and sandbox credit is not refundable`);
    }
    let left = more;
    while (left > 0) {
      const share = await recordShare(orgId, left, note);
      if (share === null) break;
      if ("ok" in share) return stopped(share);
      const sent = await send(share.record, share.paymentRef);
      if (!sent.ok) return stopped(sent);
      left -= share.record.amountKrw;
    }
    if (left > 0) return stopped(fail("conflict", `Only ${more - left} KRW of the ${more} KRW asked for could be paid back through a payment provider`));
    const run = await openRun(orgId);
    return { ok: true, refunds: run.map(view), refundedKrw: run.filter((r) => isTakenOff(r.state)).reduce((n, r) => n + r.amountKrw, 0) };
  }

  /** Ends the completion: its refunds no longer count towards the next one's amount. */
  async function closeRun(orgId: string): Promise<void> {
    await db.query("UPDATE refunds SET completed_at = $2 WHERE org_id = $1 AND origin = 'operator' AND completed_at IS NULL AND state <> 'requested'", [orgId, new Date(now())]);
  }

  return { refundableKrw, complete, closeRun };
}

export type Refunds = ReturnType<typeof createRefunds>;
