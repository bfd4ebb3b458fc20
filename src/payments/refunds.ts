// Paying money back (the operator completing a customer's refund request): only money a
// provider took for a top-up of this organization is ever paid back, through that
// provider, against the payments it took. Sandbox top-ups and operator credit are credit,
// never money: they are not refundable, and what is left of them stays as credit.
//
// Each top-up's share is paid back at the provider first, then recorded: the top-up's
// refunded_krw and the ledger's refund entry in one transaction. The provider's
// idempotency key names the top-up and what was refunded of it before, not the amount:
// the provider binds a key to its first request's parameters, so a second payment at the
// same point (a completion asked again after a lost answer or a failed entry, or two at
// once) is either that same refund, entered once, or refused, never paid twice. A
// provider refusal stops the run; what was paid back so far stays recorded, and the
// operator asks again.
import type { Billing } from "../billing/index.ts";
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import type { PaymentProvider } from "./provider.ts";

export interface RefundDeps {
  db: Db;
  billing: Pick<Billing, "adjust">;
  provider: PaymentProvider | undefined;
  log: (e: Record<string, unknown>) => void;
}

interface PaidTopup {
  topup_id: string;
  provider: string;
  payment_ref: string | null;
  amount_krw: number;
  refunded_krw: number;
}

/**
 * The provider's idempotency key for paying back a share of top-up `t`: the top-up and
 * what was refunded of it before. Never the amount (see the top of this file).
 */
const refundKey = (t: Pick<PaidTopup, "topup_id" | "refunded_krw">): string => `refund-${t.topup_id}-${t.refunded_krw}`;

export function createRefunds({ db, billing, provider, log }: RefundDeps) {
  /** Money the org paid in through a provider and has not had back. */
  async function refundableKrw(orgId: string): Promise<number> {
    const rows = await db.query<{ left: number | null }>(
      "SELECT sum(amount_krw - refunded_krw) AS left FROM topups WHERE org_id = $1 AND state = 'confirmed' AND takes_money",
      [orgId],
    );
    return Number(rows[0]?.left ?? 0);
  }

  /** Pays `amountKrw` back through the provider, newest payments first; at most refundableKrw. */
  async function payBack(orgId: string, amountKrw: number, note: string): Promise<{ ok: true; refundedKrw: number } | Failure> {
    const paid = await db.query<PaidTopup>(
      `SELECT topup_id, provider, payment_ref, amount_krw, refunded_krw FROM topups
        WHERE org_id = $1 AND state = 'confirmed' AND takes_money AND refunded_krw < amount_krw
        ORDER BY confirmed_at DESC, topup_id`,
      [orgId],
    );
    let left = amountKrw;
    let refunded = 0;
    for (const t of paid) {
      if (left === 0) break;
      const take = Math.min(left, t.amount_krw - t.refunded_krw);
      if (!provider || provider.name !== t.provider || !t.payment_ref) {
        return fail("conflict", `Top-up ${t.topup_id} was paid through ${t.provider}, which is not the configured payment provider; ${refunded} KRW paid back so far`);
      }
      const r = await provider.refund({ paymentRef: t.payment_ref, amountKrw: take, idempotencyKey: refundKey(t) });
      if (!r.ok) return fail(r.code, `${r.title ?? "The payment provider refused the refund"}; ${refunded} KRW paid back so far`);
      const entered = await db.transaction(async (tx) => {
        const moved = await tx.query("UPDATE topups SET refunded_krw = refunded_krw + $2 WHERE topup_id = $1 AND refunded_krw = $3 RETURNING topup_id", [
          t.topup_id,
          take,
          t.refunded_krw,
        ]);
        if (moved.length === 0) return false;
        const entry = await billing.adjust(orgId, "refund", -take, `${note} (${t.topup_id}, ${r.refundRef})`, { within: tx });
        if (!entry.ok) throw new Error(`refund of ${take} KRW paid at the provider (${r.refundRef}) but not entered: ${entry.title ?? entry.code}`);
        return true;
      });
      // Another completion entered this point's refund first: under the same key the
      // provider made one refund, so it is that one, entered once, and not this run's.
      if (!entered) return fail("conflict", `Another completion entered the refund of top-up ${t.topup_id} at the same moment; ${refunded} KRW paid back by this one. Ask again to see what is left`);
      log({ level: "info", msg: "refund paid", orgId, topupId: t.topup_id, amountKrw: take, refundRef: r.refundRef });
      left -= take;
      refunded += take;
    }
    if (left > 0) return fail("conflict", `Only ${refunded} KRW of the ${amountKrw} KRW asked for was paid in through a payment provider`);
    return { ok: true, refundedKrw: refunded };
  }

  return { refundableKrw, payBack };
}

export type Refunds = ReturnType<typeof createRefunds>;
