// Top-ups: a pending record per attempt, opened at the payment provider, and credited to
// the ledger only by a payment event the provider vouches for (settle): a verified
// webhook, or the sandbox's approval outside production. Nothing a browser sends (the
// customer's return from the provider's page, a form) credits anything.
//
// settle runs in one transaction: the event's row (payment_events, keyed by the
// provider's event ID), the top-up's state and the ledger's credit commit together or
// not at all. So a replayed or repeated event finds its row and changes nothing, two
// events for one payment credit once (the second finds the top-up confirmed), and a
// failure anywhere leaves nothing half done for the provider's retry to find. What the
// provider moves later (disputes, refunds) goes through the same door: money-events.ts.
//
// Opening one is bounded per organization (MAX_OPEN_TOPUPS): the count and a row that
// reserves a place ('opening') are one transaction under a per-organization lock, made
// before the provider is called, so top-ups opened at the same moment cannot all pass
// the count; the row becomes 'pending' with the provider's answer, or is deleted.
import type { Billing } from "../billing/index.ts";
import { randomBase62, type Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { createMoneyEvents } from "./money-events.ts";
import type { PaymentEvent, PaymentProvider, ProviderRefund } from "./provider.ts";
import { createRefundBook } from "./refund-records.ts";
import { isSandbox } from "./sandbox.ts";

/** The amounts a customer can choose (KRW). */
export const TOPUP_AMOUNTS_KRW = [10_000, 50_000, 100_000] as const;

/**
 * Unpaid top-ups an org may have opened within TOPUP_OPEN_WINDOW_MS. Each one is a call to
 * the provider's API, whose rate limit every customer's payments and refunds share, and a
 * row: a free account posting in a loop must not spend either.
 */
export const MAX_OPEN_TOPUPS = 5;
export const TOPUP_OPEN_WINDOW_MS = 30 * 60_000;

/** The advisory lock class under which one organization's top-ups are opened one at a time (the key: a hash of its ID). */
const OPENING_LOCK_CLASS = 730_511_402;

export type TopupState = "pending" | "confirming" | "confirmed" | "failed";

export interface Topup {
  topupId: string;
  orgId: string;
  amountKrw: number;
  provider: string;
  state: TopupState;
  /** The provider's page where the customer pays (null for rows from before it was kept). */
  payUrl: string | null;
  createdAt: number;
  confirmedAt: number | null;
}

interface TopupRow {
  topup_id: string;
  org_id: string;
  amount_krw: number;
  provider: string;
  provider_ref: string;
  state: TopupState;
  pay_url: string | null;
  created_at: number;
  confirmed_at: number | null;
}

const COLUMNS = "topup_id, org_id, amount_krw, provider, provider_ref, state, pay_url, created_at, confirmed_at";

const toTopup = (r: TopupRow): Topup => ({
  topupId: r.topup_id,
  orgId: r.org_id,
  amountKrw: r.amount_krw,
  provider: r.provider,
  state: r.state,
  payUrl: r.pay_url,
  createdAt: r.created_at,
  confirmedAt: r.confirmed_at,
});

/** What an event did: the money it moved (once), or why it changed nothing. */
export type SettleOutcome =
  | { outcome: "credited" | "disputed" | "dispute_won" | "dispute_lost"; topupId: string; orgId: string; balanceKrw: number }
  | { outcome: "refunded" | "refund_pending" | "refund_succeeded" | "refund_returned"; topupId: string; orgId: string }
  | { outcome: "duplicate" | "failed" | "refused" | "unknown" | "ignored"; topupId?: string; orgId?: string; reason?: string };

export interface TopupDeps {
  db: Db;
  now: () => number;
  billing: Pick<Billing, "credit" | "enterMovement">;
  /** The configured provider; undefined: top-ups are not offered (PAYMENT_PROVIDER=none). */
  provider: PaymentProvider | undefined;
  /** Whether the org may top up now (refund in progress: no). */
  refundPending: (orgId: string) => Promise<boolean>;
  log: (e: Record<string, unknown>) => void;
}

export function createTopups({ db, now, billing, provider, refundPending, log }: TopupDeps) {
  const money = createMoneyEvents(billing, createRefundBook(billing, now), now);

  /** Opens a payment at the provider; the customer comes back to `returnUrl` (paid or not) or `cancelUrl`. */
  async function start(
    orgId: string,
    amountKrw: number,
    urls: { returnUrl: (topupId: string) => string; cancelUrl: (topupId: string) => string },
  ): Promise<({ ok: true } & Topup) | Failure> {
    if (!provider) return fail("service_unavailable", "Top-up is not available: no payment provider is configured");
    if (!(TOPUP_AMOUNTS_KRW as readonly number[]).includes(amountKrw)) {
      return fail("invalid_parameter", `Choose one of ${TOPUP_AMOUNTS_KRW.map((a) => a.toLocaleString("en-US")).join(", ")} KRW`);
    }
    if (await refundPending(orgId)) return fail("refund_pending", "A refund is being processed; top up after it completes");
    const topupId = `top_${randomBase62(22)}`;
    const reserved = await db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2))", [OPENING_LOCK_CLASS, orgId]);
      const open = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM topups WHERE org_id = $1 AND state IN ('opening', 'pending') AND created_at > $2",
        [orgId, new Date(now() - TOPUP_OPEN_WINDOW_MS)],
      );
      if ((open[0]?.n ?? 0) >= MAX_OPEN_TOPUPS) return false;
      // A place under the cap, held while the provider is asked; the reference is ours until the provider's replaces it.
      await tx.query(
        `INSERT INTO topups (topup_id, org_id, amount_krw, provider, provider_ref, state, takes_money, created_at)
         VALUES ($1, $2, $3, $4, $5, 'opening', $6, $7)`,
        [topupId, orgId, amountKrw, provider.name, `opening-${topupId}`, provider.takesMoney, new Date(now())],
      );
      return true;
    });
    if (!reserved) {
      return fail("rate_limited", `${MAX_OPEN_TOPUPS} top-ups were opened in the last ${TOPUP_OPEN_WINDOW_MS / 60_000} minutes and not paid: pay one of them, or open another later`);
    }
    const giveBack = () => db.query("DELETE FROM topups WHERE topup_id = $1 AND state = 'opening'", [topupId]);
    let started: Awaited<ReturnType<PaymentProvider["start"]>>;
    try {
      started = await provider.start({ topupId, amountKrw, returnUrl: urls.returnUrl(topupId), cancelUrl: urls.cancelUrl(topupId) });
    } catch (err) {
      await giveBack();
      throw err;
    }
    if (!started.ok) {
      await giveBack();
      return started;
    }
    const rows = await db.query<TopupRow>(
      `UPDATE topups SET state = 'pending', provider_ref = $2, pay_url = $3 WHERE topup_id = $1 AND state = 'opening' RETURNING ${COLUMNS}`,
      [topupId, started.providerRef, started.payUrl],
    );
    if (!rows[0]) throw new Error(`top-up ${topupId} was no longer opening when the provider answered`);
    return { ok: true, ...toTopup(rows[0]) };
  }

  /** The org's own top-up, or null (also for another org's ID). */
  async function get(orgId: string, topupId: string): Promise<Topup | null> {
    const rows = await db.query<TopupRow>(`SELECT ${COLUMNS} FROM topups WHERE topup_id = $1 AND org_id = $2 AND state <> 'opening'`, [topupId, orgId]);
    return rows[0] ? toTopup(rows[0]) : null;
  }

  async function list(orgId: string, limit = 20): Promise<Topup[]> {
    const rows = await db.query<TopupRow>(
      `SELECT ${COLUMNS} FROM topups WHERE org_id = $1 AND state <> 'opening' ORDER BY created_at DESC, topup_id LIMIT ${Math.max(1, Math.min(100, limit))}`,
      [orgId],
    );
    return rows.map(toTopup);
  }

  /**
   * Acts on one payment event of `providerName`, exactly once (see the top of the file).
   * A paid event credits the top-up it names only if the amount and currency are the
   * top-up's; any other amount is refused and the top-up marked failed, for an operator
   * to pay back at the provider.
   */
  async function settle(providerName: string, ev: PaymentEvent): Promise<SettleOutcome> {
    const refunds = await refundsOfEvent(ev);
    const r = await db.transaction(async (tx): Promise<SettleOutcome> => {
      const fresh = await tx.query(
        `INSERT INTO payment_events (provider, event_id, event_type, outcome, received_at) VALUES ($1, $2, $3, 'received', $4)
         ON CONFLICT (provider, event_id) DO NOTHING RETURNING event_id`,
        [providerName, ev.eventId, ev.eventType, new Date(now())],
      );
      if (fresh.length === 0) return { outcome: "duplicate" };
      const result = ev.kind === "dispute" || ev.kind === "refund" || ev.kind === "charge_refunded" ? await money.apply(tx, providerName, ev, refunds) : await apply(tx, providerName, ev);
      await tx.query("UPDATE payment_events SET outcome = $3, topup_id = $4 WHERE provider = $1 AND event_id = $2", [
        providerName,
        ev.eventId,
        result.outcome,
        result.topupId ?? null,
      ]);
      return result;
    });
    const level = r.outcome === "refused" || r.outcome === "unknown" ? "error" : "info";
    log({ level, msg: "payment event", provider: providerName, eventId: ev.eventId, eventType: ev.eventType, ...r });
    return r;
  }

  /**
   * A refunded payment's refunds: the event's own list when it carried all of them, else
   * read from the provider (Stripe leaves the list out of a Charge in its newer API
   * versions). Read before the transaction; a failed read throws, so the webhook answers
   * 5xx and the provider delivers the event again.
   */
  async function refundsOfEvent(ev: PaymentEvent): Promise<ProviderRefund[]> {
    if (ev.kind !== "charge_refunded") return [];
    if (ev.payment.refunds) return ev.payment.refunds;
    const read = await provider?.refundsOf?.({ chargeRef: ev.payment.ref });
    if (!read?.ok) throw new Error(`the refunds of ${ev.payment.ref} could not be read from the provider: ${read?.title ?? "no provider to read"}`);
    return read.refunds;
  }

  async function apply(tx: Db, providerName: string, ev: Extract<PaymentEvent, { kind: "paid" | "failed" | "other" }>): Promise<SettleOutcome> {
    if (ev.kind === "other") return ev.unreadable ? { outcome: "refused", reason: ev.unreadable } : { outcome: "ignored" };
    const rows = await tx.query<TopupRow & { takes_money: boolean }>(
      `SELECT ${COLUMNS}, takes_money FROM topups WHERE provider = $1 AND provider_ref = $2 FOR UPDATE`,
      [providerName, ev.providerRef],
    );
    const t = rows[0];
    if (!t) return { outcome: "unknown", reason: `no top-up has the ${providerName} reference ${ev.providerRef}` };
    if (ev.topupId !== undefined && ev.topupId !== t.topup_id) return { outcome: "refused", topupId: t.topup_id, reason: `the event names top-up ${ev.topupId}` };
    if (t.state === "confirmed") return { outcome: "duplicate", topupId: t.topup_id, reason: "already credited" };
    if (t.state === "failed") return { outcome: "refused", topupId: t.topup_id, reason: "the top-up had failed before" };
    if (ev.kind === "failed") {
      await markFailed(tx, t.topup_id, ev.reason);
      return { outcome: "failed", topupId: t.topup_id, reason: ev.reason };
    }
    if (ev.currency.toLowerCase() !== "krw" || ev.amount !== t.amount_krw) {
      const reason = `paid ${ev.amount} ${ev.currency} for a top-up of ${t.amount_krw} krw`;
      await markFailed(tx, t.topup_id, reason);
      return { outcome: "refused", topupId: t.topup_id, reason };
    }
    if (t.takes_money && !ev.paymentRef) return { outcome: "refused", topupId: t.topup_id, reason: "the event names no payment to refund from" };
    const credited = await billing.credit(t.org_id, t.amount_krw, `top-up ${t.topup_id} (${providerName})`, { within: tx, ref: t.topup_id });
    // Rolls the event's row back too: the provider's next delivery finds it undone.
    if (!credited.ok) throw new Error(`top-up ${t.topup_id} not credited: ${credited.title ?? credited.code}`);
    await tx.query("UPDATE topups SET state = 'confirmed', confirmed_at = $2, payment_ref = $3 WHERE topup_id = $1", [
      t.topup_id,
      new Date(now()),
      ev.paymentRef ?? null,
    ]);
    return { outcome: "credited", topupId: t.topup_id, orgId: t.org_id, balanceKrw: credited.balanceKrw };
  }

  async function markFailed(tx: Db, topupId: string, reason: string): Promise<void> {
    await tx.query("UPDATE topups SET state = 'failed', failure = $2 WHERE topup_id = $1", [topupId, reason.slice(0, 200)]);
  }

  /**
   * The sandbox's "Pay" button (outside production only): the sandbox approves or declines,
   * and its event is settled as a webhook's would be. Confirming twice credits once.
   */
  async function confirmSandbox(orgId: string, topupId: string): Promise<{ ok: true; balanceKrw: number | null; already: boolean } | Failure> {
    const t = await db.query<TopupRow>(`SELECT ${COLUMNS} FROM topups WHERE topup_id = $1 AND org_id = $2`, [topupId, orgId]);
    const row = t[0];
    if (!row) return fail("not_found", "Top-up not found");
    if (row.state === "confirmed") return { ok: true, balanceKrw: null, already: true };
    if (row.state !== "pending") return fail("conflict", `This top-up is ${row.state}`);
    if (row.provider !== "sandbox" || !isSandbox(provider)) return fail("conflict", "This top-up is confirmed by its payment provider, not here");
    if (await refundPending(orgId)) return fail("refund_pending", "A refund is being processed; top up after it completes");
    const r = await settle("sandbox", provider.approve({ providerRef: row.provider_ref, amountKrw: row.amount_krw }));
    if (r.outcome === "credited") return { ok: true, balanceKrw: r.balanceKrw, already: false };
    // Another confirm of the same top-up settled it first.
    if ((await get(orgId, topupId))?.state === "confirmed") return { ok: true, balanceKrw: null, already: true };
    return fail("conflict", r.outcome === "failed" ? "The sandbox declined this payment" : `This top-up was not credited: ${("reason" in r ? r.reason : undefined) ?? r.outcome}`);
  }

  return { start, get, list, settle, confirmSandbox, offered: provider !== undefined, providerName: provider?.name };
}

export type Topups = ReturnType<typeof createTopups>;
