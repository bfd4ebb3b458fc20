// Ending a hold: capture (charge) or release (give the reservation back). Both lock
// the org row first and the hold row second, the same order reserve uses, so
// concurrent calls on one org queue up instead of deadlocking. The state check under
// the hold lock is what makes each hold end exactly once.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { subtractSpend, type SpendScope } from "./spend.ts";

interface HoldRow {
  org_id: string;
  app_id: string;
  amount_krw: number;
  state: "open" | "captured" | "released";
  captured_krw: number | null;
  expires_at: number;
  kst_day: string;
  kst_month: string;
}

export type CaptureResult = { ok: true; chargedKrw: number; balanceKrw: number } | Failure;
export type ReleaseResult = { ok: true; released: boolean } | Failure;

/** Locks the org of a hold, then the hold itself; null when there is no such hold. */
async function lockHold(tx: Db, requestId: string): Promise<HoldRow | null> {
  // org_id never changes, so reading it before taking the org lock is safe.
  const ref = await tx.query<{ org_id: string }>("SELECT org_id FROM holds WHERE request_id = $1", [requestId]);
  if (!ref[0]) return null;
  await tx.query("SELECT 1 FROM organizations WHERE org_id = $1 FOR UPDATE", [ref[0].org_id]);
  const rows = await tx.query<HoldRow>(
    `SELECT org_id, app_id, amount_krw, state, captured_krw, expires_at, kst_day, kst_month
       FROM holds WHERE request_id = $1 FOR UPDATE`,
    [requestId],
  );
  return rows[0] ?? null;
}

function scopeOf(h: HoldRow): SpendScope {
  return { orgId: h.org_id, appId: h.app_id, kstDay: h.kst_day, kstMonth: h.kst_month };
}

/**
 * Charges min(amountKrw, reserved). A second capture of the same request charges
 * nothing more and answers with the first capture's numbers.
 */
export async function captureHold(tx: Db, now: number, requestId: string, amountKrw: number): Promise<CaptureResult> {
  if (!Number.isSafeInteger(amountKrw) || amountKrw <= 0) {
    throw new RangeError(`capture amount must be a positive whole number of won, got ${amountKrw}`);
  }
  const hold = await lockHold(tx, requestId);
  if (!hold) return fail("not_found", "No reservation for this request");
  if (hold.state === "captured") {
    const prior = await tx.query<{ amount_krw: number; balance_after_krw: number }>(
      "SELECT amount_krw, balance_after_krw FROM ledger_entries WHERE request_id = $1 AND kind = 'capture'",
      [requestId],
    );
    return { ok: true, chargedKrw: -prior[0].amount_krw, balanceKrw: prior[0].balance_after_krw };
  }
  if (hold.state === "released") return fail("conflict", "This request's reservation was already released");

  // Never more than reserved: the reservation was the most the caller agreed to pay.
  const charged = Math.min(amountKrw, hold.amount_krw);
  await tx.query(
    "UPDATE holds SET state = 'captured', captured_krw = $2, settled_at = $3 WHERE request_id = $1",
    [requestId, charged, new Date(now)],
  );
  const org = await tx.query<{ balance_krw: number }>(
    `UPDATE organizations SET balance_krw = balance_krw - $2, held_krw = held_krw - $3
      WHERE org_id = $1 RETURNING balance_krw`,
    [hold.org_id, charged, hold.amount_krw],
  );
  const balanceKrw = org[0].balance_krw;
  await tx.query(
    `INSERT INTO ledger_entries (org_id, kind, amount_krw, balance_after_krw, request_id, created_at)
     VALUES ($1, 'capture', $2, $3, $4, $5)`,
    [hold.org_id, -charged, balanceKrw, requestId, new Date(now)],
  );
  await subtractSpend(tx, scopeOf(hold), hold.amount_krw - charged);
  return { ok: true, chargedKrw: charged, balanceKrw };
}

/**
 * Gives an open hold back. Releasing twice, or a request that never got a hold, is
 * fine (released: false); releasing a captured hold is refused, a charge stands.
 * With `onlyIfExpiredAt`, only a hold whose expiry has passed is released (sweeper).
 */
export async function releaseHold(
  tx: Db,
  now: number,
  requestId: string,
  onlyIfExpiredAt?: number,
): Promise<ReleaseResult> {
  const hold = await lockHold(tx, requestId);
  if (!hold) return { ok: true, released: false };
  if (hold.state === "captured") return fail("conflict", "This request was already charged");
  if (hold.state === "released") return { ok: true, released: false };
  if (onlyIfExpiredAt !== undefined && hold.expires_at > onlyIfExpiredAt) return { ok: true, released: false };

  await tx.query("UPDATE holds SET state = 'released', settled_at = $2 WHERE request_id = $1", [
    requestId,
    new Date(now),
  ]);
  await tx.query("UPDATE organizations SET held_krw = held_krw - $2 WHERE org_id = $1", [
    hold.org_id,
    hold.amount_krw,
  ]);
  await subtractSpend(tx, scopeOf(hold), hold.amount_krw);
  return { ok: true, released: true };
}
