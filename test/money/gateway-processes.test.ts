// Two real gateway processes sharing one Postgres and one Redis, as a scaled-out
// deployment runs:
//  - they keep an organization's live concurrency cap of 2 between them (the permits
//    live in Redis, so a request on one process sees the ones taken on the other; the
//    stub model takes 1.5 s, so calls fired together overlap for certain);
//  - one killed (SIGKILL) after it reserved a hold takes no money: the hold stays open
//    until it expires, then the other process's sweeper releases it;
//  - one stopped with SIGTERM finishes its call, charges it once and frees its permit.
// The embedded deployment's crash is in crash-gateway.test.ts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createBilling } from "../../src/billing/index.ts";
import { openDb, type Db } from "../../src/db/index.ts";
import { createRedisLimiter, type Limiter } from "../../src/limits/index.ts";
import { fixture } from "../support/harness.ts";
import { assertLogMatchesLedger, assertSettled, ledgerSummary } from "../support/money-checks.ts";
import { heldPermits, orgLiveKey } from "../support/permits.ts";
import { outcomeOf, sendRemovebg, tally, type Outcome } from "../support/removebg-request.ts";
import { adminClient, over, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import { openStack, REAL, type OpenedStack } from "../support/stacks.ts";

const IMAGE = fixture("images/orient-upright.png");
const FULL_IMAGE = fixture("photos/astronaut.png"); // 512×512: a full-tier output, 110 KRW
const PRICE = 22;
const FULL = 110;

describe("gateway processes sharing Postgres and Redis", { skip: REAL.skip, timeout: 120_000 }, () => {
  let opened: OpenedStack | undefined;
  let a: ServerProcess;
  let b: ServerProcess;
  let db: Db | undefined;
  let limiter: Limiter | undefined;

  before(async () => {
    opened = await openStack(REAL, 11);
    // POOL_SIZE 2: a process can run both permitted calls at once, so the cap and not
    // the pool decides what overlaps. The sweeper looks every 200 ms (it only ever
    // releases holds past their expiry, so it cannot disturb the other tests).
    const env = { ...opened.env, STUB_DELAY_MS: "1500", POOL_SIZE: "2", HOLD_SWEEP_INTERVAL_MS: "200" };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
    db = await openDb({ databaseUrl: opened.env.DATABASE_URL, dataDir: "", max: 2 });
    limiter = createRedisLimiter({ url: opened.env.REDIS_URL });
  });
  after(async () => {
    await stopAll();
    await limiter?.close();
    await db?.close();
    await opened?.close();
  });

  const call = (server: ServerProcess, key: string) => sendRemovebg(over(server.url), key, { image_file: IMAGE, size: "preview" }).then(outcomeOf);

  async function waitForOpenHolds(orgId: string, n: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const rows = await db!.query("SELECT 1 FROM holds WHERE org_id = $1 AND state = 'open'", [orgId]);
      if (rows.length >= n) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`never saw ${n} open holds`);
  }

  function assertRateLimited(outcomes: Outcome[]) {
    for (const o of outcomes.filter((x) => x.status === 429)) {
      assert.equal(o.code, "rate_limited");
      assert.match(o.retryAfter ?? "", /^[1-9]\d*$/, "a 429 carries Retry-After in whole seconds");
      assert.equal(o.chargedKrw, undefined, "a 429 is free");
    }
  }

  test("two calls in progress on one process: the other process refuses a third", async () => {
    const c = await setUpCustomer(adminClient(a.url), { creditKrw: 100 * PRICE });
    const first = [call(a, c.liveKey), call(a, c.liveKey)];
    await waitForOpenHolds(c.orgId, 2); // both are past their permits and holds, in the product
    const refused = await Promise.all([call(b, c.liveKey), call(b, c.liveKey)]);
    assert.deepEqual(tally(refused), { "429 rate_limited": 2 });
    assertRateLimited(refused);
    assert.deepEqual(tally(await Promise.all(first)), { "200": 2 });
    // Once they are done the other process gets its turn.
    assert.deepEqual(tally(await Promise.all([call(b, c.liveKey), call(b, c.liveKey)])), { "200": 2 });

    const s = await assertSettled(db!, c.orgId);
    assert.equal(s.captures, 4);
    assert.equal(s.balanceKrw, 96 * PRICE);
    await assertLogMatchesLedger(db!, c.orgId);
  });

  test("six calls fired together across both processes: 2 × 200 and 4 × 429, twice over", async () => {
    const c = await setUpCustomer(adminClient(b.url), { creditKrw: 100 * PRICE });
    for (let wave = 0; wave < 2; wave++) {
      const outcomes = await Promise.all([a, b, a, b, a, b].map((s) => call(s, c.liveKey)));
      assert.deepEqual(tally(outcomes), { "200": 2, "429 rate_limited": 4 }, `wave ${wave}`);
      assertRateLimited(outcomes);
    }
    const s = await assertSettled(db!, c.orgId);
    assert.equal(s.captures, 4);
    assert.equal(s.balanceKrw, 96 * PRICE);
    const rows = await assertLogMatchesLedger(db!, c.orgId);
    assert.equal(rows.length, 12, "both processes logged every call");
    assert.equal(rows.filter((r) => r.status === 429 && r.error_code === "rate_limited" && r.charged_krw === 0).length, 8);
    // Every path gave its permits back: each process serves a fresh call, and then none is
    // left in Redis. (In that order: the refusals above left the key a place in the org's
    // line, which a probe naming no caller would have to queue behind until the key is
    // admitted again and leaves the line.)
    assert.deepEqual(tally(await Promise.all([call(a, c.liveKey), call(b, c.liveKey)])), { "200": 2 });
    assert.equal(await heldPermits(limiter!, orgLiveKey(c.orgId), 2), 0);
  });

  test("a process killed after reserve takes no money; the other one's sweeper releases the hold", async () => {
    const c = await setUpCustomer(adminClient(b.url), { creditKrw: 1000 });
    const call = sendRemovebg(over(a.url), c.liveKey, { image_file: FULL_IMAGE }).then(
      (res) => ({ answered: res.status }),
      (err: unknown) => ({ connectionError: err instanceof Error ? err.message : String(err) }),
    );
    await waitForOpenHolds(c.orgId, 1);
    await a.kill("SIGKILL"); // while its product runs (1.5 s)
    assert.ok("connectionError" in (await call), "the client saw the connection drop, not an answer");

    // Dead gateway, open hold: reserved but not charged.
    const crashed = await ledgerSummary(db!, c.orgId);
    assert.deepEqual(
      { balance: crashed.balanceKrw, held: crashed.heldKrw, open: crashed.openHolds, captures: crashed.captures },
      { balance: 1000, held: FULL, open: 1, captures: 0 },
    );
    // Not yet expired: a sweep now must leave it (its request could still be running).
    assert.equal(await createBilling({ db: db!, now: Date.now, holdTtlMs: 1 }).sweepExpired(), 0);
    assert.equal((await ledgerSummary(db!, c.orgId)).openHolds, 1);

    // Time passes beyond the hold's expiry (deadline + 60 s) — moved in the row rather
    // than waited for — and the surviving process's sweeper, on its timer, gives it back.
    await db!.query("UPDATE holds SET expires_at = $2 WHERE org_id = $1 AND state = 'open'", [c.orgId, new Date(Date.now() - 1000)]);
    for (let i = 0; (await ledgerSummary(db!, c.orgId)).openHolds > 0; i++) {
      if (i > 400) throw new Error("the sweeper never released the hold");
      await new Promise((r) => setTimeout(r, 25));
    }
    const s = await assertSettled(db!, c.orgId);
    assert.deepEqual({ balance: s.balanceKrw, captures: s.captures, released: s.releasedHolds }, { balance: 1000, captures: 0, released: 1 });
    const org = await adminClient(b.url)("GET", `/orgs/${c.orgId}`);
    assert.equal(org.json.availableKrw, 1000, "the reserved amount is available again");

    // The dead process's Redis lease on the org cap outlives it until the lease ends
    // (deadline + 10 s); the cap of 2 still leaves room, so the next call goes through.
    assert.ok((await heldPermits(limiter!, orgLiveKey(c.orgId), 2)) <= 1);
    const fresh = await sendRemovebg(over(b.url), c.liveKey, { image_file: FULL_IMAGE }).then(outcomeOf);
    assert.deepEqual([fresh.status, fresh.chargedKrw, fresh.balanceKrw], [200, FULL, 1000 - FULL]);
    await assertSettled(db!, c.orgId);
  });

  test("a process stopped with SIGTERM finishes its call, charges it once and frees its permit", async () => {
    const c = await setUpCustomer(adminClient(b.url), { creditKrw: 100 * PRICE });
    const inFlight = call(b, c.liveKey);
    await waitForOpenHolds(c.orgId, 1);
    await b.kill("SIGTERM");
    const o = await inFlight;
    assert.deepEqual([o.status, o.chargedKrw], [200, PRICE], "the in-flight call completed before the process left");
    assert.equal((await b.exited).code, 0);
    assert.equal(await heldPermits(limiter!, orgLiveKey(c.orgId), 2), 0, "its permit is back in Redis");
    const s = await assertSettled(db!, c.orgId);
    assert.equal(s.captures, 1);
  });
});
