// A gateway killed (SIGKILL) after it reserved a hold, while the product runs, takes no
// money: the hold stays open (it may not be given back while the request could still
// be running), the hold sweeper releases it once it has expired, the balance never
// moved, and the reserved amount is available again. Both deployments: the embedded
// default (PGlite in DATA_DIR, in-process limiter) and Postgres + Redis.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createBilling } from "../../src/billing/index.ts";
import { openDb, type Db } from "../../src/db/index.ts";
import { createRedisLimiter } from "../../src/limits/index.ts";
import { fixture } from "../support/harness.ts";
import { assertSettled, ledgerSummary } from "../support/money-checks.ts";
import { heldPermits, orgLiveKey } from "../support/permits.ts";
import { outcomeOf, sendRemovebg } from "../support/removebg-request.ts";
import { adminClient, over, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import { EMBEDDED, openStack, REAL, type OpenedStack } from "../support/stacks.ts";

const FULL_IMAGE = fixture("photos/astronaut.png"); // 512×512: a full-tier output, 110 KRW
const FULL = 110;
const CREDIT = 1000;
// Long enough to kill the process while the product runs; the pool's warm-up run takes it too.
const STUB_DELAY_MS = "2000";

/** Starts the paid call and returns its promise, which must end in a connection error. */
function fireFullCall(server: ServerProcess, key: string): Promise<unknown> {
  const p = sendRemovebg(over(server.url), key, { image_file: FULL_IMAGE }).then(
    (res) => ({ answered: res.status }),
    (err: unknown) => ({ connectionError: err instanceof Error ? err.message : String(err) }),
  );
  return p;
}

async function poll<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("gateway killed after reserve [postgres+redis]", { skip: REAL.skip, timeout: 120_000 }, () => {
  let opened: OpenedStack | undefined;
  let db: Db | undefined;

  before(async () => {
    opened = await openStack(REAL, 12);
    db = await openDb({ databaseUrl: opened.env.DATABASE_URL, dataDir: "", max: 2 });
  });
  after(async () => {
    await stopAll();
    await db?.close();
    await opened?.close();
  });

  test("the open hold is released by the next process's sweeper; nothing is charged", async () => {
    const first = await startServer({ ...opened!.env, STUB_DELAY_MS });
    const c = await setUpCustomer(adminClient(first.url), { creditKrw: CREDIT });
    const call = fireFullCall(first, c.liveKey);
    const held = await poll("the hold", () => ledgerSummary(db!, c.orgId), (s) => s.openHolds === 1);
    assert.equal(held.heldKrw, FULL);
    await first.kill("SIGKILL");
    assert.ok("connectionError" in ((await call) as object), "the client saw the connection drop, not an answer");

    // Dead gateway, open hold: reserved but not charged.
    const after = await ledgerSummary(db!, c.orgId);
    assert.deepEqual(
      { balance: after.balanceKrw, held: after.heldKrw, open: after.openHolds, captures: after.captures },
      { balance: CREDIT, held: FULL, open: 1, captures: 0 },
    );
    // Not yet expired: a sweep now must leave it (its request could still be running).
    assert.equal(await createBilling({ db: db!, now: Date.now, holdTtlMs: 1 }).sweepExpired(), 0);
    assert.equal((await ledgerSummary(db!, c.orgId)).openHolds, 1);

    // Time passes beyond the hold's expiry (deadline + margin) — moved in the row rather
    // than waited for — and a new process's own sweeper, on its timer, gives it back.
    await db!.query("UPDATE holds SET expires_at = $2 WHERE org_id = $1 AND state = 'open'", [c.orgId, new Date(Date.now() - 1000)]);
    const second = await startServer({ ...opened!.env, STUB_DELAY_MS: "0", HOLD_SWEEP_INTERVAL_MS: "200" });
    await poll("the sweeper", () => ledgerSummary(db!, c.orgId), (s) => s.openHolds === 0, 10_000);
    const s = await assertSettled(db!, c.orgId);
    assert.deepEqual(
      { balance: s.balanceKrw, captures: s.captures, released: s.releasedHolds },
      { balance: CREDIT, captures: 0, released: 1 },
    );
    assert.ok(second.lines.some((l) => l.includes("released expired holds")), "the sweep is logged");
    const org = await adminClient(second.url)("GET", `/orgs/${c.orgId}`);
    assert.equal(org.json.availableKrw, CREDIT, "the reserved amount is available again");

    // The dead process's Redis lease on the org cap outlives it until the lease ends
    // (deadline + 10 s); the cap of 2 still leaves room, so the next call goes through.
    const limiter = createRedisLimiter({ url: opened!.env.REDIS_URL });
    try {
      assert.ok((await heldPermits(limiter, orgLiveKey(c.orgId), 2)) <= 1);
    } finally {
      await limiter.close();
    }
    const fresh = await sendRemovebg(over(second.url), c.liveKey, { image_file: FULL_IMAGE }).then(outcomeOf);
    assert.equal(fresh.status, 200);
    assert.equal(fresh.chargedKrw, FULL);
    assert.equal(fresh.balanceKrw, CREDIT - FULL);
    await assertSettled(db!, c.orgId);
  });
});

describe("gateway killed after reserve [embedded]", { skip: EMBEDDED.skip, timeout: 120_000 }, () => {
  let opened: OpenedStack | undefined;

  before(async () => {
    opened = await openStack(EMBEDDED, 0, { dataDir: true });
  });
  after(async () => {
    await stopAll();
    await opened?.close();
  });

  test("the hold survives the crash in the data directory and the sweeper releases it", async () => {
    const env = { ...opened!.env, STUB_DELAY_MS };
    const first = await startServer(env);
    const admin = adminClient(first.url);
    const c = await setUpCustomer(admin, { creditKrw: CREDIT });
    const call = fireFullCall(first, c.liveKey);
    // Only the server may open its PGlite directory while it runs: watch through the operator API.
    await poll("the hold", () => admin("GET", `/orgs/${c.orgId}`), (r) => r.json.availableKrw === CREDIT - FULL);
    await first.kill("SIGKILL");
    assert.ok("connectionError" in ((await call) as object));

    // The dead server's directory, opened the way the service opens it.
    const db = await openDb({ dataDir: opened!.pgliteDir! });
    try {
      const crashed = await ledgerSummary(db, c.orgId);
      assert.deepEqual(
        { balance: crashed.balanceKrw, held: crashed.heldKrw, open: crashed.openHolds, captures: crashed.captures },
        { balance: CREDIT, held: FULL, open: 1, captures: 0 },
      );
      const [hold] = await db.query<{ expires_at: number }>("SELECT expires_at FROM holds WHERE org_id = $1", [c.orgId]);
      // The sweeper with a clock just before and just after the hold's expiry.
      assert.equal(await createBilling({ db, now: () => hold.expires_at - 1, holdTtlMs: 1 }).sweepExpired(), 0);
      assert.equal(await createBilling({ db, now: () => hold.expires_at, holdTtlMs: 1 }).sweepExpired(), 1);
      const s = await assertSettled(db, c.orgId);
      assert.deepEqual({ balance: s.balanceKrw, captures: s.captures, released: s.releasedHolds }, { balance: CREDIT, captures: 0, released: 1 });
    } finally {
      await db.close();
    }

    // A restarted server on the same directory: the in-process permits died with the
    // old process, the money is available, and a fresh call is charged once.
    const second = await startServer({ ...env, STUB_DELAY_MS: "0" });
    const org = await adminClient(second.url)("GET", `/orgs/${c.orgId}`);
    assert.deepEqual([org.json.balanceKrw, org.json.availableKrw], [CREDIT, CREDIT]);
    const outcomes = await Promise.all([1, 2].map(() => sendRemovebg(over(second.url), c.liveKey, { image_file: FULL_IMAGE }).then(outcomeOf)));
    assert.deepEqual(outcomes.map((o) => [o.status, o.chargedKrw]), [[200, FULL], [200, FULL]], "both org permits are free");
    await second.kill("SIGTERM");
  });
});
