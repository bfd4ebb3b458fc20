// The ledger's invariants, checked from the tables themselves after each scenario.
import assert from "node:assert/strict";
import type { Db } from "../../src/db/index.ts";

export async function assertLedgerInvariants(db: Db, orgId: string): Promise<void> {
  const [org] = await db.query<{ balance_krw: number; held_krw: number }>(
    "SELECT balance_krw, held_krw FROM organizations WHERE org_id = $1",
    [orgId],
  );
  const [sums] = await db.query<{ total: number | null; credits: number | null; captures: number | null; others: number | null }>(
    `SELECT sum(amount_krw) AS total,
            sum(amount_krw) FILTER (WHERE kind = 'credit') AS credits,
            sum(-amount_krw) FILTER (WHERE kind = 'capture') AS captures,
            sum(amount_krw) FILTER (WHERE kind IN ('refund', 'adjust')) AS others
       FROM ledger_entries WHERE org_id = $1`,
    [orgId],
  );
  const [holds] = await db.query<{ open_krw: number | null; captured_krw: number | null; captured_n: number }>(
    `SELECT sum(amount_krw) FILTER (WHERE state = 'open') AS open_krw,
            sum(captured_krw) FILTER (WHERE state = 'captured') AS captured_krw,
            count(*) FILTER (WHERE state = 'captured') AS captured_n
       FROM holds WHERE org_id = $1`,
    [orgId],
  );
  const [caps] = await db.query<{ n: number }>(
    "SELECT count(*) AS n FROM ledger_entries WHERE org_id = $1 AND kind = 'capture'",
    [orgId],
  );

  assert.ok(org.balance_krw >= 0, "balance never negative");
  assert.ok(org.held_krw >= 0 && org.held_krw <= org.balance_krw, "0 <= held <= balance");
  assert.equal(org.balance_krw, sums.total ?? 0, "balance = sum of ledger entries");
  assert.equal(org.balance_krw, (sums.credits ?? 0) - (sums.captures ?? 0) + (sums.others ?? 0), "balance = credits - captures");
  assert.equal(org.held_krw, holds.open_krw ?? 0, "held = open holds");
  assert.equal(holds.captured_n, caps.n, "one capture entry per captured hold");
  assert.equal(holds.captured_krw ?? 0, sums.captures ?? 0, "captured holds = captures in the ledger");

  // Spending counters agree with the holds they summarise.
  const counters = await db.query<{ period: string; krw: number }>(
    "SELECT period, krw FROM spend_counters WHERE scope_id = $1 AND krw > 0 ORDER BY period",
    [orgId],
  );
  const fromHolds = await db.query<{ period: string; krw: number }>(
    `SELECT kst_day AS period, sum(CASE state WHEN 'open' THEN amount_krw WHEN 'captured' THEN captured_krw ELSE 0 END) AS krw
       FROM holds WHERE org_id = $1 GROUP BY kst_day
     HAVING sum(CASE state WHEN 'open' THEN amount_krw WHEN 'captured' THEN captured_krw ELSE 0 END) > 0
      ORDER BY kst_day`,
    [orgId],
  );
  assert.deepEqual(counters, fromHolds, "org daily counters = open + captured holds per KST day");
}
