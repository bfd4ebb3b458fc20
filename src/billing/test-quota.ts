// Free test-key calls: 50 per KST month, or 50 for the organization's whole life
// when the operator has reduced it (organizations.test_quota = 'lifetime').
//
// Each call counts in two rows of test_usage: its KST month and 'lifetime'. The row
// that limits this org is incremented first by one conditional upsert, which is
// atomic on its own (the row lock makes concurrent calls queue), so exactly 50 calls
// get through however many arrive at once. Calls that end in an error are free
// (recorded decision), so the gateway gives them back with refundTestCall.
//
// A call is also recorded by its request ID (call_takes, migrations/0007), so it is
// given back at most once, and so a consume whose outcome is unknown (a store error:
// it may have committed, or may still commit) can be given back whatever order the two
// statements meet in: abandonTestCall marks the request ID given back first, and a
// consume that runs later counts nothing.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { kstMonth, nextKstMonthStart, secondsUntil } from "./kst.ts";

export const TEST_CALLS_PER_PERIOD = 50;
const LIFETIME = "lifetime";

export interface TestQuotaDeps {
  db: Db;
  now: () => number;
}

export interface TestCallQuery {
  orgId: string;
  /** The call's request ID: what refundTestCall and abandonTestCall give back by. */
  requestId?: string;
  /** true for an operator-reduced organization: 50 calls for life, no monthly reset. */
  lifetime: boolean;
}

export interface TestCallTaken {
  ok: true;
  /** Calls left in the limiting period after this one. */
  remaining: number;
  /** The KST month the call was counted in; pass it back to refundTestCall. */
  period: string;
}

export function createTestQuota({ db, now }: TestQuotaDeps) {
  async function consumeTestCall(q: TestCallQuery): Promise<TestCallTaken | Failure> {
    const t = now();
    const month = kstMonth(t);
    const [limiting, other] = q.lifetime ? [LIFETIME, month] : [month, LIFETIME];
    return db.transaction(async (tx) => {
      if (q.requestId !== undefined) {
        // First, so an abandon of this request ID that came earlier makes this call count nothing.
        const marked = await tx.query(
          `INSERT INTO call_takes (request_id, what, state, org_id, period, created_at)
           VALUES ($1, 'free_call', 'taken', $2, $3, $4) ON CONFLICT (request_id, what) DO NOTHING RETURNING 1`,
          [q.requestId, q.orgId, month, new Date(t)],
        );
        if (!marked[0]) return fail("service_unavailable", "This call's free call was given back");
      }
      const rows = await tx.query<{ count: number }>(
        `INSERT INTO test_usage (org_id, period, count) VALUES ($1, $2, 1)
         ON CONFLICT (org_id, period) DO UPDATE SET count = test_usage.count + 1
           WHERE test_usage.count < $3
         RETURNING count`,
        [q.orgId, limiting, TEST_CALLS_PER_PERIOD],
      );
      if (!rows[0]) {
        // Nothing counted: nothing to give back for this request ID.
        if (q.requestId !== undefined) await tx.query("DELETE FROM call_takes WHERE request_id = $1 AND what = 'free_call'", [q.requestId]);
        return q.lifetime
          ? fail("test_quota_exceeded", "The free test calls of this organization are used up")
          : fail(
              "test_quota_exceeded",
              "This month's free test calls are used up",
              secondsUntil(t, nextKstMonthStart(t)),
            );
      }
      await tx.query(
        `INSERT INTO test_usage (org_id, period, count) VALUES ($1, $2, 1)
         ON CONFLICT (org_id, period) DO UPDATE SET count = test_usage.count + 1`,
        [q.orgId, other],
      );
      return { ok: true as const, remaining: TEST_CALLS_PER_PERIOD - rows[0].count, period: month };
    });
  }

  /**
   * Gives back one call taken by consumeTestCall. `period` is the month it returned
   * (default: the current one), so a call that straddles midnight on the 1st gives
   * back to the month it was counted in.
   */
  async function refundTestCall(q: { orgId: string; period?: string; requestId?: string }): Promise<void> {
    if (q.requestId !== undefined) return refundByRequest(q.requestId);
    const month = q.period ?? kstMonth(now());
    await db.query(
      `UPDATE test_usage SET count = count - 1
        WHERE org_id = $1 AND period IN ($2, $3) AND count > 0`,
      [q.orgId, month, LIFETIME],
    );
  }

  /** Gives back the call `requestId` took, once however often asked; nothing when it took none. */
  async function refundByRequest(requestId: string): Promise<void> {
    await db.transaction(async (tx) => {
      const taken = await tx.query<{ org_id: string; period: string }>(
        `UPDATE call_takes SET state = 'given_back'
          WHERE request_id = $1 AND what = 'free_call' AND state = 'taken'
          RETURNING org_id, period`,
        [requestId],
      );
      const t = taken[0];
      if (!t) return;
      await tx.query(
        `UPDATE test_usage SET count = count - 1
          WHERE org_id = $1 AND period IN ($2, $3) AND count > 0`,
        [t.org_id, t.period, LIFETIME],
      );
    });
  }

  /**
   * Ends the free call of a request whose consume had an unknown outcome: given back if
   * it was counted, and a consume of this request ID that runs later counts nothing.
   * A store outage throws (ask again); idempotent.
   */
  async function abandonTestCall(q: { requestId: string; orgId: string }): Promise<void> {
    // The mark first; one consume running at this moment makes it wait, then is refunded below.
    await db.query(
      `INSERT INTO call_takes (request_id, what, state, org_id, created_at)
       VALUES ($1, 'free_call', 'given_back', $2, $3) ON CONFLICT (request_id, what) DO NOTHING`,
      [q.requestId, q.orgId, new Date(now())],
    );
    await refundByRequest(q.requestId);
  }

  async function testCallsRemaining(q: TestCallQuery): Promise<number> {
    const period = q.lifetime ? LIFETIME : kstMonth(now());
    const rows = await db.query<{ count: number }>(
      "SELECT count FROM test_usage WHERE org_id = $1 AND period = $2",
      [q.orgId, period],
    );
    return Math.max(0, TEST_CALLS_PER_PERIOD - (rows[0]?.count ?? 0));
  }

  return { consumeTestCall, refundTestCall, abandonTestCall, testCallsRemaining };
}

export type TestQuota = ReturnType<typeof createTestQuota>;
