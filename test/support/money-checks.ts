// What "no money went missing" means, read from the tables after a scenario: the
// ledger invariants of test/billing (balance = credits − captures, held = open holds,
// one capture entry per captured hold, spend counters agree), no hold left open, and
// the request log telling the same story as the ledger.
import assert from "node:assert/strict";
import type { Db } from "../../src/db/index.ts";
import { DbUnavailableError } from "../../src/db/postgres-db.ts";
import { assertLedgerInvariants } from "../billing/invariants.ts";

export interface LedgerSummary {
  balanceKrw: number;
  heldKrw: number;
  creditsKrw: number;
  capturedKrw: number;
  captures: number;
  openHolds: number;
  releasedHolds: number;
}

export async function ledgerSummary(db: Db, orgId: string): Promise<LedgerSummary> {
  const [org] = await db.query<{ balance_krw: number; held_krw: number }>(
    "SELECT balance_krw, held_krw FROM organizations WHERE org_id = $1",
    [orgId],
  );
  const [entries] = await db.query<{ credits: number | null; captured: number | null; captures: number }>(
    `SELECT sum(amount_krw) FILTER (WHERE kind = 'credit') AS credits,
            sum(-amount_krw) FILTER (WHERE kind = 'capture') AS captured,
            count(*) FILTER (WHERE kind = 'capture') AS captures
       FROM ledger_entries WHERE org_id = $1`,
    [orgId],
  );
  const [holds] = await db.query<{ open: number; released: number }>(
    `SELECT count(*) FILTER (WHERE state = 'open') AS open, count(*) FILTER (WHERE state = 'released') AS released
       FROM holds WHERE org_id = $1`,
    [orgId],
  );
  return {
    balanceKrw: org.balance_krw,
    heldKrw: org.held_krw,
    creditsKrw: entries.credits ?? 0,
    capturedKrw: entries.captured ?? 0,
    captures: entries.captures,
    openHolds: holds.open,
    releasedHolds: holds.released,
  };
}

/** Every hold settled, and the ledger invariants hold. Returns the summary for further checks. */
export async function assertSettled(db: Db, orgId: string): Promise<LedgerSummary> {
  await assertLedgerInvariants(db, orgId);
  const s = await ledgerSummary(db, orgId);
  assert.equal(s.openHolds, 0, "no hold left open");
  assert.equal(s.heldKrw, 0, "nothing held");
  assert.equal(s.balanceKrw, s.creditsKrw - s.capturedKrw, "balance = credits − captures");
  return s;
}

export interface LogRow {
  request_id: string;
  status: number;
  error_code: string | null;
  charged_krw: number;
  attempts: number;
}

export async function requestLogRows(db: Db, orgId: string): Promise<LogRow[]> {
  return db.query<LogRow>(
    "SELECT request_id, status, error_code, charged_krw, attempts FROM request_log WHERE org_id = $1",
    [orgId],
  );
}

/**
 * The request log agrees with the ledger: a charged row for each capture (same
 * request IDs, same amounts), and no error row charged anything.
 */
export async function assertLogMatchesLedger(db: Db, orgId: string): Promise<LogRow[]> {
  const rows = await requestLogRows(db, orgId);
  const captures = await db.query<{ request_id: string; krw: number }>(
    "SELECT request_id, -amount_krw AS krw FROM ledger_entries WHERE org_id = $1 AND kind = 'capture'",
    [orgId],
  );
  const charged = rows.filter((r) => r.charged_krw > 0);
  assert.deepEqual(
    charged.map((r) => [r.request_id, r.charged_krw]).sort(),
    captures.map((c) => [c.request_id, c.krw]).sort(),
    "charged log rows = capture ledger entries",
  );
  for (const r of rows) {
    if (r.status !== 200) assert.equal(r.charged_krw, 0, `error ${r.status} ${r.error_code} charged nothing`);
  }
  return rows;
}

/** What a store call throws when its outcome is unknown: a statement cut short, or its reply lost. */
export const lostReply = () => new DbUnavailableError("database unavailable: not answering (a statement or connection just timed out)");

/** Runs the reconciler until nothing is pending (it also runs on its own timer), and checks that nothing is. */
export async function drainReconciler(reconciler: { runOnce(): Promise<number>; pending(): number }): Promise<void> {
  for (let i = 0; i < 10 && (await reconciler.runOnce()) > 0; i++);
  assert.equal(reconciler.pending(), 0, "nothing left to give back");
}
