// An Idempotency-Key replay is no free compute (docs/DECISIONS.md "Idempotency-Key"): it
// charges nothing, but it runs only where a first call would (a live key's balance covers
// the tier, its spending limits allow it; a test key has a free call left), and one key is
// answered again at most IDEMPOTENCY_MAX_REPLAYS times. Without these, one paid call and
// its key gave unlimited model runs, even at a zero balance.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { IDEMPOTENCY_MAX_REPLAYS, IDEMPOTENCY_TTL_MS } from "../../src/billing/idempotency.ts";
import { assertLogMatchesLedger, assertSettled } from "../support/money-checks.ts";
import { keyed, newIdempotencyKey, expectError, gatewayHarness, TINY_PNG, type GatewayHarness } from "./helpers.ts";

const PRICE = 22;

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const newKey = newIdempotencyKey;
const call = (key: string | undefined, idem: string) => g.removebg(key, { image_file: TINY_PNG, size: "preview" }, keyed(idem));

async function runs(orgId: string): Promise<number> {
  const rows = await g.h.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM request_log WHERE org_id = $1 AND status = 200", [orgId]);
  return rows[0]!.n;
}

describe("a replay needs what a first call needs", () => {
  test("live key at a zero balance: the paid call's replay is refused 402, the model does not run again", async () => {
    const c = await g.h.customer({ creditKrw: PRICE });
    const key = newKey();
    const first = await call(c.liveKey, key);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("x-pd-balance-krw"), "0");
    await first.arrayBuffer();
    for (let i = 0; i < 3; i++) await expectError(await call(c.liveKey, key), 402, "insufficient_credits");
    assert.equal(await runs(c.orgId), 1, "one image made, for the one call paid");
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw], [1, 0]);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("live key past its app's daily limit: the replay is refused like a first call", async () => {
    const c = await g.h.customer({ creditKrw: 10_000 });
    const key = newKey();
    assert.equal((await call(c.liveKey, key)).status, 200);
    assert.equal((await g.h.admin("PATCH", `/apps/${c.appId}`, { dailyLimitKrw: PRICE })).status, 200);
    await expectError(await call(c.liveKey, key), 429, "daily_limit_reached");
  });

  test("a replay that runs holds the tier's price while it runs and charges nothing", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const key = newKey();
    assert.equal((await call(c.liveKey, key)).headers.get("x-pd-charged-krw"), String(PRICE));
    const again = await call(c.liveKey, key);
    assert.equal(again.status, 200);
    assert.deepEqual([again.headers.get("x-pd-charged-krw"), again.headers.get("idempotent-replayed")], ["0", "true"]);
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw, s.releasedHolds], [1, 1000 - PRICE, 1]);
  });

  test("test key with no free call left: the replay is refused 429 test_quota_exceeded", async () => {
    const c = await g.h.customer({ creditKrw: 0 });
    const key = newKey();
    assert.equal((await call(c.testKey, key)).status, 200);
    // The organization's 50 free calls of the month are used up (by its other calls).
    await g.h.services.db.query("UPDATE test_usage SET count = 50 WHERE org_id = $1", [c.orgId]);
    await expectError(await call(c.testKey, key), 429, "test_quota_exceeded");
  });
});

describe("one key is answered again a bounded number of times", () => {
  test(`after ${IDEMPOTENCY_MAX_REPLAYS} replays: 422 idempotency_key_exhausted, nothing charged or run`, async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const key = newKey();
    assert.equal((await call(c.liveKey, key)).status, 200);
    for (let i = 0; i < IDEMPOTENCY_MAX_REPLAYS; i++) {
      const again = await call(c.liveKey, key);
      assert.equal(again.status, 200, `replay ${i + 1}`);
      assert.equal(again.headers.get("idempotent-replayed"), "true");
    }
    await expectError(await call(c.liveKey, key), 422, "idempotency_key_exhausted");
    assert.equal(await runs(c.orgId), 1 + IDEMPOTENCY_MAX_REPLAYS);
    // A new key is a new call, charged as usual.
    assert.equal((await call(c.liveKey, newKey())).headers.get("x-pd-charged-krw"), String(PRICE));
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw], [2, 1000 - 2 * PRICE]);
  });

  test("a replay refused on the way (402) does not use up the key's replays", async () => {
    const c = await g.h.customer({ creditKrw: PRICE });
    const key = newKey();
    assert.equal((await call(c.liveKey, key)).status, 200);
    await expectError(await call(c.liveKey, key), 402, "insufficient_credits");
    await g.h.admin("POST", `/orgs/${c.orgId}/credit`, { amountKrw: PRICE });
    for (let i = 0; i < IDEMPOTENCY_MAX_REPLAYS; i++) assert.equal((await call(c.liveKey, key)).status, 200, `replay ${i + 1}`);
  });

  test("a key past its 24 hours starts a new life: charged again, and its replays counted from zero", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const key = newKey();
    assert.equal((await call(c.liveKey, key)).status, 200);
    for (let i = 0; i < IDEMPOTENCY_MAX_REPLAYS; i++) assert.equal((await call(c.liveKey, key)).status, 200);
    await expectError(await call(c.liveKey, key), 422, "idempotency_key_exhausted");
    g.clock.advance(IDEMPOTENCY_TTL_MS + 1000);
    const again = await call(c.liveKey, key);
    assert.deepEqual([again.status, again.headers.get("x-pd-charged-krw")], [200, String(PRICE)]);
    assert.equal((await call(c.liveKey, key)).headers.get("idempotent-replayed"), "true");
  });
});
