// A frozen Postgres (SIGSTOP to the postmaster and every backend: connections are still
// accepted by the kernel, nothing answers) against the pg adapter itself: a burst of 40
// calls and a caller asking one after another all get their answer (a store error)
// while the server is still frozen, not when it thaws, and the adapter serves again
// after SIGCONT by itself. What bounds them: statement/query/handshake timeouts, and
// once one of those fires, the calls still queued for the pool are cut short
// (src/db/postgres-db.ts). Without the cut, the burst took 21–25 s to drain. The
// gateway-level version (503 + Retry-After under load) is in store-outage.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openPostgres } from "../../src/db/postgres-db.ts";
import { isStoreUnavailable } from "../../src/http/store-unavailable.ts";
import { privateStoresSkip, startPrivateStores } from "../support/private-stores.ts";
import { LONG } from "./load.ts";

const FROZEN_MS = LONG ? 30_000 : 12_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test(`a Postgres frozen for ${FROZEN_MS / 1000} s: every call is answered while it is still frozen; served again after SIGCONT`, { skip: privateStoresSkip(), timeout: FROZEN_MS + 180_000 }, async () => {
  const stores = await startPrivateStores();
  const db = openPostgres(stores.databaseUrl, 10, { applicationName: "pd-freeze-test" });
  try {
    await db.query("SELECT 1");
    await stores.freezePostgres();
    let thawedAt = Infinity;
    const ended: { at: number; error: unknown }[] = [];
    const call = async () => {
      try {
        await db.query("SELECT 1");
        ended.push({ at: Date.now(), error: undefined });
      } catch (error) {
        ended.push({ at: Date.now(), error });
      }
    };
    // The thaw comes at its time whatever the calls do; a call that ends after it fails the test.
    const frozenUntil = Date.now() + FROZEN_MS;
    const thawed = sleep(FROZEN_MS).then(() => {
      thawedAt = Date.now();
      return stores.thawPostgres();
    });
    const burst = Promise.all(Array.from({ length: 40 }, call));
    let sequential = 0;
    while (Date.now() < frozenUntil - 7_000) {
      // Only calls that can end before the thaw (the bounds are 5–6 s) are started.
      await call();
      sequential++;
      await sleep(100);
    }
    await burst;
    await thawed;

    assert.equal(ended.length, 40 + sequential);
    for (const e of ended) {
      assert.ok(e.at < thawedAt, "answered while the server was still frozen");
      assert.ok(isStoreUnavailable(e.error), `a store error the gateway turns into 503: ${String(e.error)}`);
    }
    // Served again by itself (after the short pause that follows a timeout).
    let back = false;
    for (let i = 0; i < 100 && !back; i++) {
      back = await db.query("SELECT 1").then(() => true, () => false);
      if (!back) await sleep(200);
    }
    assert.ok(back, "the adapter serves again after SIGCONT");
  } finally {
    await stores.thawPostgres().catch(() => {});
    await db.close().catch(() => {});
    await stores.destroy();
  }
});
