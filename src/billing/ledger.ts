// The billing service: prepaid balances, holds per request, spending limits.
//
// Life of a paid request: reserve(requestId, price of its tier) → processing →
// capture(requestId, price of the output) on success, or release(requestId) on any
// error. Holds not settled by their expiry (the gateway died mid-request) are
// released by sweepExpired(), which main.ts runs on a timer.
//
// Invariants (asserted in test/billing): balance = sum of the org's ledger entries
// = credits - captures (± operator and provider entries); balance >= held >= 0 unless
// the provider took money back on its own (a dispute, a refund in its dashboard:
// enterMovement with floor "none"); every hold ends captured or released exactly once
// and is charged at most once.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { reserveHold, type ReserveInput } from "./reserve.ts";
import { abandonHold } from "./abandon.ts";
import { captureHold, releaseHold, type CaptureResult, type ReleaseResult } from "./settle.ts";
import { readSpend, type SpendNow } from "./spend.ts";
import type { RequestLogRow } from "./request-log.ts";
import { kstDay, kstMonth } from "./kst.ts";
import { rearmLowBalance } from "./low-balance.ts";

export type { ReserveInput } from "./reserve.ts";
export type { CaptureResult, ReleaseResult } from "./settle.ts";

export interface BillingDeps {
  db: Db;
  now: () => number;
  /** How long a hold may stay open before the sweeper gives it back. */
  holdTtlMs: number;
}

export interface Balances {
  balanceKrw: number;
  /** balance - open holds: what the next reservation may use. */
  availableKrw: number;
  heldKrw: number;
}

/** Operator entries besides top-ups: money paid back, or a correction either way. */
export type AdjustKind = "refund" | "adjust";

/**
 * Movements of money at the payment provider (migrations/0010), each entered once under
 * the reference of what moved (`ref`): a top-up's credit, a refund taken off and (if the
 * provider failed it) given back, a dispute withheld and (if won) given back.
 */
export type MovementKind = "credit" | "refund" | "refund_returned" | "dispute" | "dispute_returned";

/** A ledger write inside the caller's transaction (a `tx` handle of db.transaction). */
export interface Within {
  within?: Db;
}

export interface MovementOptions extends Within {
  /**
   * "holds": refused when it would take the balance below what open holds reserved (a
   * refund we ask for). "none": entered whatever the balance, even below zero: the
   * provider has moved the money already (a dispute, a refund made in its dashboard).
   */
  floor: "holds" | "none";
}

/** An entry's answer; `entered: false` when this movement had its entry already (nothing changed). */
export type Entered = { ok: true; balanceKrw: number; entered: boolean } | Failure;

const SWEEP_BATCH = 500;

const balanceOnly = (r: Entered): { ok: true; balanceKrw: number } | Failure => (r.ok ? { ok: true, balanceKrw: r.balanceKrw } : r);

export function createBilling({ db, now, holdTtlMs }: BillingDeps) {
  /**
   * Adds prepaid credit (a paid top-up, or the operator's grant). `within`: the caller's
   * transaction, so the credit commits or rolls back with what the caller records beside
   * it (a top-up's state and the payment event that paid it: src/payments/topups.ts).
   * `ref`: the top-up it credits (entered once).
   */
  async function credit(orgId: string, amountKrw: number, note?: string, o: Within & { ref?: string } = {}): Promise<{ ok: true; balanceKrw: number } | Failure> {
    if (!Number.isSafeInteger(amountKrw) || amountKrw <= 0) {
      return fail("invalid_parameter", "Credit must be a positive whole number of won");
    }
    return balanceOnly(await appendEntry(o.within ?? db, orgId, "credit", amountKrw, note, o.ref, "holds"));
  }

  /**
   * A refund (deltaKrw < 0, money leaving) or an adjustment (either sign). Refused
   * when it would take the balance below what open holds have reserved. `within` as for credit.
   */
  async function adjust(
    orgId: string,
    kind: AdjustKind,
    deltaKrw: number,
    note?: string,
    o: Within = {},
  ): Promise<{ ok: true; balanceKrw: number } | Failure> {
    if (!Number.isSafeInteger(deltaKrw) || deltaKrw === 0 || (kind === "refund" && deltaKrw > 0)) {
      return fail("invalid_parameter", "Amount must be a non-zero whole number of won (negative for a refund)");
    }
    return balanceOnly(await appendEntry(o.within ?? db, orgId, kind, deltaKrw, note, undefined, "holds"));
  }

  /**
   * One movement of money at the provider, entered once: a second call for the same kind
   * and `ref` enters nothing and answers `entered: false`. The sign is the kind's (refund
   * and dispute take off; the others give).
   */
  async function enterMovement(orgId: string, kind: MovementKind, amountKrw: number, ref: string, note: string, o: MovementOptions): Promise<Entered> {
    if (!Number.isSafeInteger(amountKrw) || amountKrw <= 0) return fail("invalid_parameter", "A movement is a positive whole number of won");
    const delta = kind === "refund" || kind === "dispute" ? -amountKrw : amountKrw;
    return appendEntry(o.within ?? db, orgId, kind, delta, note, ref, o.floor);
  }

  function appendEntry(
    on: Db,
    orgId: string,
    kind: MovementKind | AdjustKind,
    deltaKrw: number,
    note: string | undefined,
    ref: string | undefined,
    floor: MovementOptions["floor"],
  ): Promise<Entered> {
    // On a caller's transaction handle this runs inside that transaction (db/types.ts).
    return on.transaction(async (tx) => {
      const rows = await tx.query<{ balance_krw: number; held_krw: number }>(
        "SELECT balance_krw, held_krw FROM organizations WHERE org_id = $1 FOR UPDATE",
        [orgId],
      );
      if (!rows[0]) return fail("not_found", "Organization not found");
      // Under the org's lock: a movement already entered is found, never entered twice.
      if (ref !== undefined) {
        const again = await tx.query("SELECT 1 FROM ledger_entries WHERE kind = $1 AND money_ref = $2", [kind, ref]);
        if (again.length > 0) return { ok: true as const, balanceKrw: rows[0].balance_krw, entered: false };
      }
      const balanceKrw = rows[0].balance_krw + deltaKrw;
      if (deltaKrw < 0 && floor === "holds" && balanceKrw < rows[0].held_krw) {
        return fail("conflict", "The balance would fall below the amount reserved by requests in progress");
      }
      if (!Number.isSafeInteger(balanceKrw)) return fail("invalid_parameter", "Balance would be too large");
      await tx.query("UPDATE organizations SET balance_krw = $2 WHERE org_id = $1", [orgId, balanceKrw]);
      await tx.query(
        `INSERT INTO ledger_entries (org_id, kind, amount_krw, balance_after_krw, note, money_ref, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [orgId, kind, deltaKrw, balanceKrw, note ?? null, ref ?? null, new Date(now())],
      );
      // Money that lifts the balance back over the low-balance threshold re-arms its e-mail.
      if (deltaKrw > 0) await rearmLowBalance(tx, orgId);
      return { ok: true as const, balanceKrw, entered: true };
    });
  }

  // Reserve, capture and release are each a single statement (a function call, see
  // migrations/0003), atomic on its own: no BEGIN/COMMIT round trips around them.

  /** Holds `amountKrw` for a request; idempotent by requestId (gateway resends). */
  function reserve(input: ReserveInput): Promise<{ ok: true } | Failure> {
    return reserveHold(db, now(), holdTtlMs, input);
  }

  /**
   * Ends the hold of a reserve whose outcome is unknown (it threw a store error, and may
   * still commit): released if it stands, and a later run of that reserve reserves
   * nothing (abandon.ts). `reservedAt`: when the reserve was asked for. Idempotent.
   */
  function abandon(input: ReserveInput & { reservedAt: number }): Promise<ReleaseResult> {
    return abandonHold(db, now(), { ...input, expiresAt: input.reservedAt + holdTtlMs });
  }

  /** Charges a held request (at most what was reserved); charging twice charges once. With `logRow`, writes that row too (settle.ts). */
  function capture(requestId: string, amountKrw: number, logRow?: RequestLogRow): Promise<CaptureResult> {
    return captureHold(db, now(), requestId, amountKrw, logRow);
  }

  /** Gives a hold back; idempotent; refused (conflict) for a captured hold. */
  function release(requestId: string): Promise<ReleaseResult> {
    return releaseHold(db, now(), requestId);
  }

  /** Releases every open hold past its expiry; returns how many it released. */
  async function sweepExpired(): Promise<number> {
    let released = 0;
    for (;;) {
      const t = now();
      const due = await db.query<{ request_id: string }>(
        `SELECT request_id FROM holds WHERE state = 'open' AND expires_at <= $1
          ORDER BY expires_at LIMIT ${SWEEP_BATCH}`,
        [new Date(t)],
      );
      let thisRound = 0;
      for (const { request_id } of due) {
        // Each on its own (one statement); the state is re-checked under the lock in
        // case the request was captured in the meantime.
        const r = await releaseHold(db, t, request_id, t);
        if (r.ok && r.released) thisRound++;
      }
      released += thisRound;
      if (due.length < SWEEP_BATCH || thisRound === 0) return released;
    }
  }

  async function balances(orgId: string): Promise<Balances | null> {
    const rows = await db.query<{ balance_krw: number; held_krw: number }>(
      "SELECT balance_krw, held_krw FROM organizations WHERE org_id = $1",
      [orgId],
    );
    if (!rows[0]) return null;
    const { balance_krw, held_krw } = rows[0];
    return { balanceKrw: balance_krw, availableKrw: balance_krw - held_krw, heldKrw: held_krw };
  }

  /** Today's org and app spend and this month's app spend (captured + open holds). */
  function spending(orgId: string, appId: string): Promise<SpendNow> {
    const t = now();
    return readSpend(db, { orgId, appId, kstDay: kstDay(t), kstMonth: kstMonth(t) });
  }

  return { credit, adjust, enterMovement, reserve, abandon, capture, release, sweepExpired, balances, spending };
}

export type Billing = ReturnType<typeof createBilling>;
