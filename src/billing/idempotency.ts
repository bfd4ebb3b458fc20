// The store of Idempotency-Keys (table idempotency_keys, migrations/0004): claim is one
// call of pd_idempotency_claim, which serialises concurrent requests with one key on
// the key's row; what the outcomes mean is in src/gateway/idempotency.ts. A claim whose
// statement failed with a store error is ended by abandon (migrations/0007): the
// request ID is marked given back first, so a claim statement that commits later
// claims nothing ('given_back'), and one that committed before is deleted.
import type { Db } from "../db/index.ts";

/** How long a key is remembered, from its first request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How often one key's result is made and sent again. A replay charges nothing, so
 * without a bound one paid call would buy unlimited model runs; three covers the
 * client library's two resends plus one more try by hand (migrations/0008: the count
 * is kept per owning request, so a key's new life starts at zero).
 */
export const IDEMPOTENCY_MAX_REPLAYS = 3;

/**
 * given_back: the request's claim was given back before its statement ran (its caller
 * has gone). exhausted: a replay of a key already answered IDEMPOTENCY_MAX_REPLAYS times.
 */
export type ClaimOutcome = "fresh" | "replay" | "mismatch" | "in_use" | "given_back" | "exhausted";

/** The claims the gateway makes (its IdempotencyPort is this shape; the store owns it). */
export interface IdempotencyClaims {
  claim(c: { appId: string; key: string; fingerprint: string; requestId: string; leaseUntil: number }): Promise<ClaimOutcome>;
  /** The owning attempt delivered its result. */
  complete(c: { appId: string; key: string; requestId: string }): Promise<void>;
  /** A replay of the key delivered its result: one of its IDEMPOTENCY_MAX_REPLAYS used. */
  countReplay(c: { appId: string; key: string }): Promise<void>;
  /** The owning attempt failed: the key keeps nothing (only when `requestId` still owns it). */
  forget(c: { appId: string; key: string; requestId: string }): Promise<void>;
  /**
   * Ends the request's claim whatever its claim statement did or will do: the key
   * keeps nothing for it, and a claim of this request ID that runs later claims
   * nothing. A store outage throws (ask again); idempotent.
   */
  abandon(c: { appId: string; key: string; requestId: string }): Promise<void>;
}

const OUTCOMES: ReadonlySet<string> = new Set(["fresh", "replay", "mismatch", "in_use", "given_back", "exhausted"]);
const PURGE_BATCH = 1000;

export function createIdempotencyStore({ db, now }: { db: Db; now: () => number }): IdempotencyClaims & { purgeExpired(): Promise<number> } {
  async function forget({ appId, key, requestId }: { appId: string; key: string; requestId: string }): Promise<void> {
    await db.query("DELETE FROM idempotency_keys WHERE app_id = $1 AND idem_key = $2 AND request_id = $3 AND completed_at IS NULL", [
      appId,
      key,
      requestId,
    ]);
  }

  return {
    async claim({ appId, key, fingerprint, requestId, leaseUntil }) {
      const t = now();
      const rows = await db.query<{ outcome: string }>(
        "SELECT pd_idempotency_claim($1, $2, $3, $4, $5, $6, $7) AS outcome",
        [appId, key, fingerprint, requestId, new Date(t), new Date(leaseUntil), new Date(t + IDEMPOTENCY_TTL_MS)],
      );
      const outcome = rows[0]?.outcome;
      if (!outcome || !OUTCOMES.has(outcome)) throw new Error(`pd_idempotency_claim answered ${JSON.stringify(outcome)}`);
      if (outcome !== "replay") return outcome as ClaimOutcome;
      // Replays only (rare): how often the owning request's result was sent again.
      const sent = await db.query<{ n: number }>(
        "SELECT CASE WHEN replays_of = request_id THEN replays ELSE 0 END AS n FROM idempotency_keys WHERE app_id = $1 AND idem_key = $2",
        [appId, key],
      );
      return (sent[0]?.n ?? 0) >= IDEMPOTENCY_MAX_REPLAYS ? "exhausted" : "replay";
    },
    async complete({ appId, key, requestId }) {
      await db.query(
        "UPDATE idempotency_keys SET completed_at = $4 WHERE app_id = $1 AND idem_key = $2 AND request_id = $3 AND completed_at IS NULL",
        [appId, key, requestId, new Date(now())],
      );
    },
    async countReplay({ appId, key }) {
      await db.query(
        `UPDATE idempotency_keys SET replays = CASE WHEN replays_of = request_id THEN replays + 1 ELSE 1 END, replays_of = request_id
          WHERE app_id = $1 AND idem_key = $2`,
        [appId, key],
      );
    },
    forget,
    async abandon(ref) {
      // The mark first: a claim statement still on its way then finds it and claims nothing;
      // one running at this moment makes the insert wait for it, and the delete sees its row.
      await db.query(
        `INSERT INTO call_takes (request_id, what, state, created_at) VALUES ($1, 'idempotency_key', 'given_back', $2)
         ON CONFLICT (request_id, what) DO UPDATE SET state = 'given_back'`,
        [ref.requestId, new Date(now())],
      );
      await forget(ref);
    },
    /** Deletes keys past their 24 hours (run by main.ts's sweeper); returns how many. */
    async purgeExpired() {
      const total = await purgeBatches(db, "idempotency_keys", "expires_at", new Date(now()));
      // What calls took by request ID (migrations/0007) outlives any statement of theirs by far.
      await purgeBatches(db, "call_takes", "created_at", new Date(now() - IDEMPOTENCY_TTL_MS));
      return total;
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;

/** Deletes `table`'s rows whose `column` is at or before `before`, PURGE_BATCH at a time (no long lock); returns how many. */
async function purgeBatches(db: Db, table: "idempotency_keys" | "call_takes", column: "expires_at" | "created_at", before: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM ${table} WHERE ctid IN (
           SELECT ctid FROM ${table} WHERE ${column} <= $1 LIMIT ${PURGE_BATCH})
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before],
    );
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < PURGE_BATCH) return total;
  }
}
