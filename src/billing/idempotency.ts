// The store of Idempotency-Keys (table idempotency_keys, migrations/0004): claim is one
// call of pd_idempotency_claim, which serialises concurrent requests with one key on
// the key's row; what the outcomes mean is in src/gateway/idempotency.ts.
import type { Db } from "../db/index.ts";

/** How long a key is remembered, from its first request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export type ClaimOutcome = "fresh" | "replay" | "mismatch" | "in_use";

/** The claims the gateway makes (its IdempotencyPort is this shape; the store owns it). */
export interface IdempotencyClaims {
  claim(c: { appId: string; key: string; fingerprint: string; requestId: string; leaseUntil: number }): Promise<ClaimOutcome>;
  /** The owning attempt delivered its result. */
  complete(c: { appId: string; key: string; requestId: string }): Promise<void>;
  /** The owning attempt failed: the key keeps nothing (only when `requestId` still owns it). */
  forget(c: { appId: string; key: string; requestId: string }): Promise<void>;
}

const OUTCOMES: ReadonlySet<string> = new Set(["fresh", "replay", "mismatch", "in_use"]);
const PURGE_BATCH = 1000;

export function createIdempotencyStore({ db, now }: { db: Db; now: () => number }): IdempotencyClaims & { purgeExpired(): Promise<number> } {
  return {
    async claim({ appId, key, fingerprint, requestId, leaseUntil }) {
      const t = now();
      const rows = await db.query<{ outcome: string }>(
        "SELECT pd_idempotency_claim($1, $2, $3, $4, $5, $6, $7) AS outcome",
        [appId, key, fingerprint, requestId, new Date(t), new Date(leaseUntil), new Date(t + IDEMPOTENCY_TTL_MS)],
      );
      const outcome = rows[0]?.outcome;
      if (!outcome || !OUTCOMES.has(outcome)) throw new Error(`pd_idempotency_claim answered ${JSON.stringify(outcome)}`);
      return outcome as ClaimOutcome;
    },
    async complete({ appId, key, requestId }) {
      await db.query(
        "UPDATE idempotency_keys SET completed_at = $4 WHERE app_id = $1 AND idem_key = $2 AND request_id = $3 AND completed_at IS NULL",
        [appId, key, requestId, new Date(now())],
      );
    },
    async forget({ appId, key, requestId }) {
      await db.query("DELETE FROM idempotency_keys WHERE app_id = $1 AND idem_key = $2 AND request_id = $3 AND completed_at IS NULL", [
        appId,
        key,
        requestId,
      ]);
    },
    /** Deletes keys past their 24 hours (run by main.ts's sweeper); returns how many. */
    async purgeExpired() {
      let total = 0;
      for (;;) {
        const rows = await db.query<{ n: number }>(
          `WITH gone AS (
             DELETE FROM idempotency_keys WHERE ctid IN (
               SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT ${PURGE_BATCH})
             RETURNING 1)
           SELECT count(*)::int AS n FROM gone`,
          [new Date(now())],
        );
        const n = rows[0]?.n ?? 0;
        total += n;
        if (n < PURGE_BATCH) return total;
      }
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
