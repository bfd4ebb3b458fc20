// Top-ups: a pending record per attempt, opened at the payment provider, and credited to
// the ledger only by a payment event the provider vouches for (settle): a verified
// webhook, or the sandbox's approval outside production. Nothing a browser sends (the
// customer's return from the provider's page, a form) credits anything.
//
// settle runs in one transaction: the event's row (payment_events, keyed by the
// provider's event ID), the top-up's state and the ledger's credit commit together or
// not at all. So a replayed or repeated event finds its row and changes nothing, two
// events for one payment credit once (the second finds the top-up confirmed), and a
// failure anywhere leaves nothing half done for the provider's retry to find.
import type { Billing } from "../billing/index.ts";
import { randomBase62, type Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import type { PaymentEvent, PaymentProvider } from "./provider.ts";
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

/** What an event did: credited (once), or why it changed nothing. */
export type SettleOutcome =
  | { outcome: "credited"; topupId: string; orgId: string; balanceKrw: number }
  | { outcome: "duplicate" | "failed" | "refused" | "unknown" | "ignored"; topupId?: string; reason?: string };

export interface TopupDeps {
  db: Db;
  now: () => number;
  billing: Pick<Billing, "credit">;
  /** The configured provider; undefined: top-ups are not offered (PAYMENT_PROVIDER=none). */
  provider: PaymentProvider | undefined;
  /** Whether the org may top up now (refund in progress: no). */
  refundPending: (orgId: string) => Promise<boolean>;
  log: (e: Record<string, unknown>) => void;
}

export function createTopups({ db, now, billing, provider, refundPending, log }: TopupDeps) {
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
    const open = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM topups WHERE org_id = $1 AND state = 'pending' AND created_at > $2", [
      orgId,
      new Date(now() - TOPUP_OPEN_WINDOW_MS),
    ]);
    if ((open[0]?.n ?? 0) >= MAX_OPEN_TOPUPS) {
      return fail("rate_limited", `${MAX_OPEN_TOPUPS} top-ups were opened in the last ${TOPUP_OPEN_WINDOW_MS / 60_000} minutes and not paid: pay one of them, or open another later`);
    }
    const topupId = `top_${randomBase62(22)}`;
    const started = await provider.start({ topupId, amountKrw, returnUrl: urls.returnUrl(topupId), cancelUrl: urls.cancelUrl(topupId) });
    if (!started.ok) return started;
    const rows = await db.query<TopupRow>(
      `INSERT INTO topups (topup_id, org_id, amount_krw, provider, provider_ref, pay_url, takes_money, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [topupId, orgId, amountKrw, provider.name, started.providerRef, started.payUrl, provider.takesMoney, new Date(now())],
    );
    return { ok: true, ...toTopup(rows[0]) };
  }

  /** The org's own top-up, or null (also for another org's ID). */
  async function get(orgId: string, topupId: string): Promise<Topup | null> {
    const rows = await db.query<TopupRow>(`SELECT ${COLUMNS} FROM topups WHERE topup_id = $1 AND org_id = $2`, [topupId, orgId]);
    return rows[0] ? toTopup(rows[0]) : null;
  }

  async function list(orgId: string, limit = 20): Promise<Topup[]> {
    const rows = await db.query<TopupRow>(
      `SELECT ${COLUMNS} FROM topups WHERE org_id = $1 ORDER BY created_at DESC, topup_id LIMIT ${Math.max(1, Math.min(100, limit))}`,
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
    const r = await db.transaction(async (tx): Promise<SettleOutcome> => {
      const fresh = await tx.query(
        `INSERT INTO payment_events (provider, event_id, event_type, outcome, received_at) VALUES ($1, $2, $3, 'received', $4)
         ON CONFLICT (provider, event_id) DO NOTHING RETURNING event_id`,
        [providerName, ev.eventId, ev.eventType, new Date(now())],
      );
      if (fresh.length === 0) return { outcome: "duplicate" };
      const result = await apply(tx, providerName, ev);
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

  async function apply(tx: Db, providerName: string, ev: PaymentEvent): Promise<SettleOutcome> {
    if (ev.kind === "other") return { outcome: "ignored" };
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
    const credited = await billing.credit(t.org_id, t.amount_krw, `top-up ${t.topup_id} (${providerName})`, { within: tx });
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
    return fail("conflict", r.outcome === "failed" ? "The sandbox declined this payment" : `This top-up was not credited: ${r.reason ?? r.outcome}`);
  }

  return { start, get, list, settle, confirmSandbox, offered: provider !== undefined, providerName: provider?.name };
}

export type Topups = ReturnType<typeof createTopups>;
