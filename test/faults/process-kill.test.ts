// Processes killed under load (SIGKILL: no shutdown code runs), on a private Postgres
// and Redis:
//  - the product process of a split deployment, mid-inference: the gateway sees a
//    connection error, resends (it is a rejection before processing), and once a new
//    product process listens on the same address calls are served again without
//    touching the gateway; nothing is charged without a delivered image;
//  - a gateway process after it reserved holds: its clients see the connection drop,
//    its permits run out with their lease, the surviving gateway serves the same
//    organizations again, and the holds are released by the sweeper.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openDb, type Db } from "../../src/db/index.ts";
import { createRedisLimiter, type Limiter } from "../../src/limits/index.ts";
import { faultReport } from "../support/fault-report.ts";
import { freePort, privateStoresSkip, startPrivateStores, type PrivateStores } from "../support/private-stores.ts";
import { adminClient, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import { LONG, assertNewCallsFlow, checkAfterFault, secondsUntil200, startLoad, type Customer } from "./load.ts";

const skip = privateStoresSkip();
const LOAD_MS = LONG ? 10_000 : 1_000;
const CUSTOMERS = LONG ? 4 : 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("faults: processes killed under load", { skip, timeout: LONG ? 900_000 : 240_000 }, () => {
  const report = faultReport(`processes killed (${LONG ? "long" : "short"} version)`);
  let stores: PrivateStores | undefined;
  let db: Db | undefined;
  let limiter: Limiter | undefined;

  before(async () => {
    stores = await startPrivateStores();
    db = await openDb({ databaseUrl: stores.databaseUrl, dataDir: "", max: 2 });
    limiter = createRedisLimiter({ url: stores.redisUrl });
  });
  after(async () => {
    report.print();
    await stopAll();
    await limiter?.close();
    await db?.close();
    await stores?.destroy();
  });

  const storesEnv = () => ({ DATABASE_URL: stores!.databaseUrl, REDIS_URL: stores!.redisUrl });

  async function customers(url: string, n: number): Promise<Customer[]> {
    const out: Customer[] = [];
    for (let i = 0; i < n; i++) out.push(await setUpCustomer(adminClient(url), { creditKrw: 200_000 }));
    return out;
  }

  async function untilOpenHolds(orgIds: string[], n: number): Promise<void> {
    for (let i = 0; i < 800; i++) {
      const [r] = await db!.query<{ n: number }>("SELECT count(*)::int AS n FROM holds WHERE state = 'open' AND org_id = ANY($1)", [orgIds]);
      if (r!.n >= n) return;
      await sleep(25);
    }
    throw new Error(`never saw ${n} open holds`);
  }

  test("the product process is killed mid-inference and started again: the gateway recovers alone", async () => {
    const productEnv = { ...storesEnv(), STUB_DELAY_MS: "1500", POOL_SIZE: "2", PORT: String(await freePort()) };
    let product = await startServer(productEnv);
    const gateway = await startServer({
      ...storesEnv(),
      PRODUCT_URL: product.url,
      // Resends wait 1 s instead of 10 when the product gives no Retry-After.
      RESEND_DEFAULT_WAIT_S: "1",
      HOLD_SWEEP_INTERVAL_MS: "200",
      PERMIT_LEASE_MS: "1000",
    });
    const cs = await customers(gateway.url, CUSTOMERS + 1);
    const [prober, ...loaded] = cs as [Customer, ...Customer[]];
    const load = startLoad(() => gateway.url, loaded, 2);
    let recoveredS: number;
    let probeCalls;
    try {
      await load.served(2 * CUSTOMERS);
      await sleep(LOAD_MS);
      // Mid-inference: holds are open, so calls are in the product right now.
      await untilOpenHolds(loaded.map((c) => c.orgId), 1);
      await sleep(300);
      await product.kill("SIGKILL");
      product = await startServer(productEnv);
      const back = Date.now();
      ({ seconds: recoveredS, calls: probeCalls } = await secondsUntil200(gateway.url, prober.liveKey, back));
      await sleep(LOAD_MS);
    } finally {
      await load.stop();
    }
    const calls = [...load.calls, ...probeCalls];
    for (const c of calls.filter((x) => x.status !== 200)) {
      // Never reached a product (all resends refused) or reached the new one before it was warm.
      assert.ok(["502 upstream_error", "503 service_not_ready"].includes(`${c.status} ${c.code}`), JSON.stringify(c));
      if (c.status === 503) assert.match(c.retryAfter ?? "", /^[1-9]\d*$/, "a 503 carries Retry-After");
    }
    const row = await checkAfterFault({ db: db!, limiter: limiter!, customers: cs, calls, sweep: "sweep-now" });
    assert.equal(row.holdsOpenAfter, 0, "the gateway released every hold itself (it never died)");
    await assertNewCallsFlow(gateway.url, db!, cs);
    report.add({ scenario: "product process SIGKILL mid-inference, restarted", ...row, recoveredS, pass: true });
    await gateway.kill();
    await product.kill();
  });

  test("a gateway process is killed after reserving: its holds are swept, its permits expire, the other gateway serves", async () => {
    const env = {
      ...storesEnv(),
      STUB_DELAY_MS: "1500",
      POOL_SIZE: "2",
      HOLD_SWEEP_INTERVAL_MS: "200",
      PERMIT_LEASE_MS: "1000",
      // The long version waits for B's own sweeper: holds live DEADLINE_MS + 60 s.
      ...(LONG ? { DEADLINE_MS: "10000" } : {}),
    };
    const [a, b] = await Promise.all([startServer(env), startServer(env)]);
    // Two orgs (4 calls in flight) is what one process's pool of 2 finishes within the
    // long version's 10 s deadline; more would mostly measure admission refusals.
    const cs = await customers(b.url, 2);
    const load = startLoad(() => a.url, cs, 2);
    let killedAt: number;
    try {
      await load.served(2 * cs.length);
      await sleep(LOAD_MS);
      await untilOpenHolds(cs.map((c) => c.orgId), cs.length);
      await a.kill("SIGKILL");
      killedAt = Date.now();
    } finally {
      await load.stop();
    }
    const [orphans] = await db!.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM holds WHERE state = 'open' AND org_id = ANY($1)",
      [cs.map((c) => c.orgId)],
    );
    assert.ok(orphans!.n >= 1, "the dead gateway left holds open (it may not release what could still be running)");
    for (const c of load.calls.filter((x) => x.status !== 200)) {
      // Cut off by the kill; or, before it, refused by the product's admission when the
      // load outgrows the (short) deadline: a 503 with Retry-After, free.
      if (c.code === "connection_error") continue;
      assert.ok(c.endedAt <= killedAt! && c.status === 503 && /^[1-9]\d*$/.test(c.retryAfter ?? ""), JSON.stringify(c));
    }

    // Through the surviving gateway: refused (429) while the dead one's leases last, then served.
    const recovered = await secondsUntil200(b.url, cs[0]!.liveKey, killedAt);
    for (const c of recovered.calls.filter((x) => x.status !== 200)) assert.deepEqual([c.status, c.code], [429, "rate_limited"]);
    const calls = [...load.calls, ...recovered.calls];
    const row = await checkAfterFault({ db: db!, limiter: limiter!, customers: cs, calls, sweep: LONG ? "wait" : "sweep-now", waitMs: 120_000 });
    await assertNewCallsFlow(b.url, db!, cs);
    report.add({
      scenario: `gateway SIGKILL after reserve (${orphans!.n} holds orphaned; ${LONG ? "B's sweeper" : "sweep at expiry"})`,
      ...row,
      recoveredS: recovered.seconds,
      pass: true,
    });
    await b.kill();
  });
});
