// The capture's COMMIT is made, then the real (private) Postgres is stopped before the
// gateway hears of it, and stays away: 20 s in the long version, 3 s in the short one.
// Within the request's deadline the gateway keeps asking until the store answers (the
// charge stands: the image is delivered with its numbers, charged once). With a
// deadline shorter than the outage the image is delivered anyway, and the reconciler
// captures the hold (and writes its log row) once Postgres is back: never an error for
// a call that may be charged (src/gateway/capture.ts, docs/RELIABILITY.md).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { DbUnavailableError } from "../../src/db/postgres-db.ts";
import { assertLogMatchesLedger, assertSettled } from "../support/money-checks.ts";
import { privateStoresSkip, startPrivateStores, type PrivateStores } from "../support/private-stores.ts";
import { capturesOf, gatewayHarness, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { LONG } from "./load.ts";

const OUTAGE_MS = LONG ? 20_000 : 3_000;
const PRICE = 22;
const CREDIT = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`faults: Postgres away for ${OUTAGE_MS / 1000} s right after the capture's COMMIT`, { skip: privateStoresSkip(), timeout: 300_000 }, () => {
  let stores: PrivateStores;
  let g: GatewayHarness;
  before(async () => {
    stores = await startPrivateStores();
    g = await gatewayHarness({ now: Date.now, env: { DATABASE_URL: stores.databaseUrl, REDIS_URL: stores.redisUrl } });
  });
  after(async () => {
    await g?.close();
    await stores?.destroy();
  });

  /** A gateway whose first capture commits, then stops Postgres (started again after OUTAGE_MS) and loses the reply. */
  function stoppingAfterCommit(config: { DEADLINE_MS?: number } = {}) {
    const billing = g.h.services.billing;
    let fired = false;
    let back: Promise<void> | undefined;
    const v = g.variant({
      config,
      services: {
        billing: {
          ...billing,
          capture: async (requestId: string, amountKrw: number) => {
            const r = await billing.capture(requestId, amountKrw);
            if (fired) return r;
            fired = true;
            await stores.stopPostgres();
            back = sleep(OUTAGE_MS).then(() => stores.start());
            throw new DbUnavailableError("database unavailable: Connection terminated unexpectedly");
          },
        },
      },
    });
    return { v, backAgain: () => back! };
  }

  test("asked until Postgres is back within the deadline: delivered with its numbers, charged once", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const { v, backAgain } = stoppingAfterCommit();
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    await backAgain();
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.arrayBuffer()).byteLength > 8);
    assert.equal(res.headers.get("x-pd-charged-krw"), String(PRICE));
    assert.equal(res.headers.get("x-pd-balance-krw"), String(CREDIT - PRICE), "the outcome was learned from the store");
    assert.deepEqual(await capturesOf(g.h, res.headers.get("x-pd-request-id")!), [PRICE]);
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw], [1, CREDIT - PRICE]);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("a deadline shorter than the outage: delivered without a balance, the reconciler captures once Postgres is back", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const { v, backAgain } = stoppingAfterCommit({ DEADLINE_MS: 2_000 });
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.arrayBuffer()).byteLength > 8);
    assert.equal(res.headers.get("x-pd-charged-krw"), String(PRICE));
    assert.equal(res.headers.get("x-pd-balance-krw"), null);
    await backAgain();
    // The reconciler asks every second on its own.
    for (let i = 0; i < 60 && g.h.services.reconciler.pending() > 0; i++) await sleep(500);
    assert.equal(g.h.services.reconciler.pending(), 0, "reconciled");
    await sleep(200); // its log-row write follows the capture
    assert.deepEqual(await capturesOf(g.h, res.headers.get("x-pd-request-id")!), [PRICE], "charged once");
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw, s.releasedHolds], [1, CREDIT - PRICE, 0]);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });
});
