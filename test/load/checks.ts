// What must hold after a load run, whatever the throughput: every hold of every org
// ended (captured or released), balance = credits − captures, one capture per logged
// 200 of a live key, and no concurrency permit left taken in Redis.
import type { Redis } from "ioredis";
import type { Db } from "../../src/db/index.ts";
import { assertLogMatchesLedger, assertSettled } from "../support/money-checks.ts";

const PERMIT_PREFIX = "pd:limits:p:";

/** Permits currently held (leases not yet expired) under the given limiter keys. */
export async function heldPermits(redis: Redis, keys: readonly string[]): Promise<number> {
  const nowMs = Date.now();
  let held = 0;
  for (const k of keys) held += await redis.zcount(`${PERMIT_PREFIX}${k}`, `(${nowMs}`, "+inf");
  return held;
}

/** Waits until no permit is held under `keys` (requests still finishing), up to `timeoutMs`. */
export async function waitForPermits(redis: Redis, keys: readonly string[], timeoutMs = 10_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const held = await heldPermits(redis, keys);
    if (held === 0 || Date.now() > until) return held;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface MoneyReport {
  orgs: number;
  captures: number;
  chargedKrw: number;
  /** Live-key answers of 200 in the request log. */
  logged200: number;
}

/** Throws (assert) on the first org whose books do not balance; otherwise sums them up. */
export async function checkMoney(db: Db, orgIds: readonly string[]): Promise<MoneyReport> {
  const r: MoneyReport = { orgs: orgIds.length, captures: 0, chargedKrw: 0, logged200: 0 };
  for (const orgId of orgIds) {
    const s = await assertSettled(db, orgId);
    await assertLogMatchesLedger(db, orgId);
    // Test-key 200s are free; only live-key successes are charged.
    const [live] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM request_log WHERE org_id = $1 AND status = 200 AND key_kind = 'live'",
      [orgId],
    );
    const ok = live!.n;
    if (ok !== s.captures) throw new Error(`org ${orgId}: ${ok} live-key answers of 200 but ${s.captures} captures`);
    r.captures += s.captures;
    r.chargedKrw += s.capturedKrw;
    r.logged200 += ok;
  }
  return r;
}
