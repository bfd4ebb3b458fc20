// Giving back a hold whose reserve has an unknown outcome. A reserve that throws a
// store error may still commit: its reply was lost, or the pg adapter cut the call
// short (src/db/postgres-db.ts) while the statement waited for a pooled connection or
// ran, and the driver sends it anyway. Left alone such a hold reserves the org's
// credit and daily spend until the sweeper releases it (deadline + 60 s), so the
// customer is refused with 402 or 429 for money nobody is using.
//
// A plain release is not enough: run before the late reserve, it finds nothing, and the
// reserve then commits. So the request ID is first marked as ended: a hold row in
// state 'released' that never held anything (no balance, held or counter change), the
// same end a released hold has. Whatever order the two statements meet in, the books
// end the same: the reserve running later finds the released row and reserves nothing
// (pd_reserve_hold answers hold_released); one that committed first is released by the
// release that follows; one running at the same moment makes the insert wait for it on
// the primary key, then the release sees its row.
import type { Db } from "../db/index.ts";
import { kstDay, kstMonth } from "./kst.ts";
import { releaseHold, type ReleaseResult } from "./settle.ts";
import type { ReserveInput } from "./reserve.ts";

export interface AbandonInput extends ReserveInput {
  /** When the reserve was asked for (epoch ms): the KST day and month it counts towards. */
  reservedAt: number;
  /** The expiry the reserve gave its hold. */
  expiresAt: number;
}

/**
 * Ends the request's hold whatever its reserve did: nothing held for it afterwards, and
 * a reserve of the same request ID that runs later reserves nothing. A store outage
 * throws (ask again); idempotent.
 */
export async function abandonHold(db: Db, now: number, h: AbandonInput): Promise<ReleaseResult> {
  await db.query(
    `INSERT INTO holds (request_id, org_id, app_id, amount_krw, state, created_at, expires_at, settled_at, kst_day, kst_month)
     VALUES ($1, $2, $3, $4, 'released', $5, $6, $7, $8, $9)
     ON CONFLICT (request_id) DO NOTHING`,
    [h.requestId, h.orgId, h.appId, h.amountKrw, new Date(h.reservedAt), new Date(h.expiresAt), new Date(now), kstDay(h.reservedAt), kstMonth(h.reservedAt)],
  );
  return releaseHold(db, now, h.requestId);
}
