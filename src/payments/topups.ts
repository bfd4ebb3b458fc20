// Top-ups: a pending record per attempt, confirmed once through the payment provider,
// then credited to the ledger. The confirm step claims the record first (pending →
// confirming), so a double click or two tabs credit once.
//
// Not atomic with the ledger: billing.credit runs its own transaction. If the process
// dies between the claim and the credit, the record stays 'confirming' for an
// operator to resolve; no money is credited twice.
import type { Billing } from "../billing/index.ts";
import { randomBase62, type Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import type { PaymentProvider } from "./provider.ts";

/** The amounts a customer can choose (KRW). */
export const TOPUP_AMOUNTS_KRW = [10_000, 50_000, 100_000] as const;

export type TopupState = "pending" | "confirming" | "confirmed" | "failed";

export interface Topup {
  topupId: string;
  orgId: string;
  amountKrw: number;
  provider: string;
  state: TopupState;
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
  created_at: number;
  confirmed_at: number | null;
}

const COLUMNS = "topup_id, org_id, amount_krw, provider, provider_ref, state, created_at, confirmed_at";

const toTopup = (r: TopupRow): Topup => ({
  topupId: r.topup_id,
  orgId: r.org_id,
  amountKrw: r.amount_krw,
  provider: r.provider,
  state: r.state,
  createdAt: r.created_at,
  confirmedAt: r.confirmed_at,
});

export interface TopupDeps {
  db: Db;
  now: () => number;
  billing: Pick<Billing, "credit">;
  provider: PaymentProvider;
  /** Whether the org may top up now (refund in progress: no). */
  refundPending: (orgId: string) => Promise<boolean>;
}

export function createTopups({ db, now, billing, provider, refundPending }: TopupDeps) {
  async function start(orgId: string, amountKrw: number): Promise<({ ok: true } & Topup) | Failure> {
    if (!(TOPUP_AMOUNTS_KRW as readonly number[]).includes(amountKrw)) {
      return fail("invalid_parameter", `Choose one of ${TOPUP_AMOUNTS_KRW.map((a) => a.toLocaleString("en-US")).join(", ")} KRW`);
    }
    if (await refundPending(orgId)) return fail("refund_pending", "A refund is being processed; top up after it completes");
    const topupId = `top_${randomBase62(22)}`;
    const started = await provider.start({ topupId, amountKrw });
    if (!started.ok) return started;
    const rows = await db.query<TopupRow>(
      `INSERT INTO topups (topup_id, org_id, amount_krw, provider, provider_ref, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [topupId, orgId, amountKrw, provider.name, started.providerRef, new Date(now())],
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

  /** The confirm step: asks the provider, then credits the ledger once. */
  async function confirm(
    orgId: string,
    topupId: string,
  ): Promise<{ ok: true; balanceKrw: number | null; already: boolean } | Failure> {
    if (await refundPending(orgId)) return fail("refund_pending", "A refund is being processed; top up after it completes");
    const claimed = await db.query<TopupRow>(
      `UPDATE topups SET state = 'confirming' WHERE topup_id = $1 AND org_id = $2 AND state = 'pending' RETURNING ${COLUMNS}`,
      [topupId, orgId],
    );
    const row = claimed[0];
    if (!row) {
      const existing = await get(orgId, topupId);
      if (!existing) return fail("not_found", "Top-up not found");
      if (existing.state === "confirmed") return { ok: true, balanceKrw: null, already: true };
      return fail("conflict", `This top-up is ${existing.state}`);
    }
    const paid = await provider.confirm({ providerRef: row.provider_ref, amountKrw: row.amount_krw });
    if (!paid.ok) {
      await db.query("UPDATE topups SET state = 'failed' WHERE topup_id = $1", [topupId]);
      return paid;
    }
    const credited = await billing.credit(orgId, row.amount_krw, `top-up ${topupId} (${provider.name})`);
    if (!credited.ok) {
      // Give the claim back so the customer can try again; the provider kept nothing.
      await db.query("UPDATE topups SET state = 'pending' WHERE topup_id = $1", [topupId]);
      return credited;
    }
    await db.query("UPDATE topups SET state = 'confirmed', confirmed_at = $2 WHERE topup_id = $1", [topupId, new Date(now())]);
    return { ok: true, balanceKrw: credited.balanceKrw, already: false };
  }

  return { start, get, list, confirm };
}

export type Topups = ReturnType<typeof createTopups>;
