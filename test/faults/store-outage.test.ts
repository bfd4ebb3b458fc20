// Faults of the stores under load: PostgreSQL stopped (pg_ctl stop -m fast) and
// started again, PostgreSQL restarted in one step, Redis shut down (nosave: it comes
// back empty, without permits or cached scripts) and started again. All on a private
// Postgres and Redis (test/support/private-stores.ts), never the shared ones.
// While a store is down every answer is 503 service_unavailable with Retry-After and
// nothing is charged; once it is back the same server process serves again by itself,
// and afterwards the money and the permits add up (load.ts checkAfterFault).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openDb, type Db } from "../../src/db/index.ts";
import { createRedisLimiter, type Limiter } from "../../src/limits/index.ts";
import { faultReport } from "../support/fault-report.ts";
import { privateStoresSkip, startPrivateStores, type PrivateStores } from "../support/private-stores.ts";
import { adminClient, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import {
  LONG,
  assertNewCallsFlow,
  assertStoreDownAnswers,
  callOnce,
  checkAfterFault,
  secondsUntil200,
  startLoad,
  type Call,
  type Customer,
} from "./load.ts";

const skip = privateStoresSkip();
const OUTAGE_MS = LONG ? 15_000 : 2_500;
const LOAD_MS = LONG ? 10_000 : 1_500; // before and after the fault
const CUSTOMERS = 3;
const CLIENTS_PER_CUSTOMER = 2; // = the org live cap: load never meets 429 on its own
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("faults: store outages under load", { skip, timeout: LONG ? 900_000 : 240_000 }, () => {
  const report = faultReport(`store outages (${LONG ? "long" : "short"} version)`);
  let stores: PrivateStores | undefined;
  let server: ServerProcess;
  let db: Db | undefined;
  let limiter: Limiter | undefined;

  before(async () => {
    stores = await startPrivateStores();
    server = await startServer({
      DATABASE_URL: stores.databaseUrl,
      REDIS_URL: stores.redisUrl,
      STUB_DELAY_MS: "150",
      POOL_SIZE: "2",
      HOLD_SWEEP_INTERVAL_MS: "500",
      PERMIT_LEASE_MS: "3000",
      // The long version waits for the server's own sweeper: holds live DEADLINE_MS + 60 s.
      ...(LONG ? { DEADLINE_MS: "10000" } : {}),
    });
    db = await openDb({ databaseUrl: stores.databaseUrl, dataDir: "", max: 2 });
    limiter = createRedisLimiter({ url: stores.redisUrl });
    void server.exited.then(({ code, signal }) => server.lines.push(`EXITED ${code ?? signal}`));
  });
  after(async () => {
    report.print();
    await stopAll();
    await limiter?.close();
    await db?.close();
    await stores?.destroy();
  });

  async function customers(n: number): Promise<Customer[]> {
    const admin = adminClient(server.url);
    const out: Customer[] = [];
    for (let i = 0; i < n; i++) out.push(await setUpCustomer(admin, { creditKrw: 200_000 }));
    return out;
  }

  /** Calls one after another until `stop()`; the answers a client sees during the outage. */
  function probe(key: string) {
    const calls: Call[] = [];
    let on = true;
    const done = (async () => {
      while (on) {
        calls.push(await callOnce(server.url, key));
        await sleep(100);
      }
    })();
    return { calls, stop: async () => ((on = false), await done, calls) };
  }

  /** The server process must survive every fault; if it died, its last log lines say why. */
  function assertAlive() {
    const dead = server.lines.some((l) => l.startsWith("EXITED"));
    assert.ok(!dead, `the server process died:\n${server.lines.slice(-40).join("\n")}`);
  }

  async function readyzStatus(): Promise<number> {
    return (await fetch(`${server.url}/readyz`)).status;
  }

  /**
   * One outage: load, `down()`, answers checked while down, `up()`, time to the first
   * 200, more load, then the after-checks.
   */
  async function outage(scenario: string, down: () => Promise<void>, up: () => Promise<void>) {
    const cs = await customers(CUSTOMERS + 1);
    const [prober, ...loaded] = cs as [Customer, ...Customer[]];
    const load = startLoad(() => server.url, loaded, CLIENTS_PER_CUSTOMER);
    try {
      return await outageUnderLoad(scenario, down, up, prober, cs, load);
    } finally {
      await load.stop();
      assertAlive();
    }
  }

  async function outageUnderLoad(
    scenario: string,
    down: () => Promise<void>,
    up: () => Promise<void>,
    prober: Customer,
    cs: Customer[],
    load: ReturnType<typeof startLoad>,
  ) {
    await load.served(CUSTOMERS * CLIENTS_PER_CUSTOMER);
    await sleep(LOAD_MS);

    await down();
    const downSince = Date.now();
    const p = probe(prober.liveKey);
    await sleep(OUTAGE_MS);
    const readyDuring = await readyzStatus();
    const probes = await p.stop();
    assert.equal(readyDuring, 503, "/readyz says not ready while a store is down");
    const upFrom = Date.now();
    await up();
    const upAt = Date.now();
    const recovered = await secondsUntil200(server.url, prober.liveKey, upAt);
    await sleep(LOAD_MS);
    const calls = [...(await load.stop()), ...probes, ...recovered.calls];

    // Calls made entirely inside the outage (a call in flight when it began may end either way).
    const during = calls.filter((c) => c.startedAt >= downSince && c.endedAt <= upFrom);
    assertStoreDownAnswers(during, scenario);
    assertStoreDownAnswers(probes, `${scenario} (probes)`);
    assert.equal(await readyzStatus(), 200, "/readyz is ready again");

    const row = await checkAfterFault({ db: db!, limiter: limiter!, customers: cs, calls, sweep: LONG ? "wait" : "sweep-now" });
    await assertNewCallsFlow(server.url, db!, cs);
    assert.equal(server.lines.filter((l) => l.includes('"unhandled error"')).length, 0, "no unhandled errors in the log");
    report.add({ scenario, ...row, recoveredS: recovered.seconds, pass: true });
    return { calls, during, probes };
  }

  test("PostgreSQL stopped and started again under load: 503 + Retry-After while down, recovers alone", async () => {
    await outage(
      `Postgres down ${OUTAGE_MS / 1000} s (pg_ctl stop -m fast, start)`,
      () => stores!.stopPostgres(),
      () => stores!.start(),
    );
  });

  test("PostgreSQL frozen (SIGSTOP) under load: 503 + Retry-After within seconds (statement, query and connect bounds), recovers after SIGCONT", async () => {
    await outage(
      `Postgres frozen ${OUTAGE_MS / 1000} s (SIGSTOP, SIGCONT)`,
      () => stores!.freezePostgres(),
      () => stores!.thawPostgres(),
    );
  });

  test("Redis shut down (nosave) and started empty under load: 503 + Retry-After while down, recovers alone", async () => {
    await outage(
      `Redis down ${OUTAGE_MS / 1000} s (shutdown nosave, start)`,
      () => stores!.stopRedis(),
      () => stores!.start(),
    );
  });

  test("PostgreSQL restarted in one step (pg_ctl restart -m fast) under load", async () => {
    const cs = await customers(CUSTOMERS + 1);
    const [prober, ...loaded] = cs as [Customer, ...Customer[]];
    const load = startLoad(() => server.url, loaded, CLIENTS_PER_CUSTOMER);
    let calls: Call[];
    let recovered: { seconds: number; calls: Call[] };
    try {
      await load.served(CUSTOMERS * CLIENTS_PER_CUSTOMER);
      await sleep(LOAD_MS);
      await stores!.restartPostgres();
      recovered = await secondsUntil200(server.url, prober.liveKey, Date.now());
      await sleep(LOAD_MS);
    } finally {
      calls = await load.stop();
      assertAlive();
    }
    calls = [...calls, ...recovered.calls];
    // Calls cut off by the restart answer 503 too, never 500, and are not charged (checked below).
    for (const c of calls.filter((x) => x.status !== 200)) {
      assert.deepEqual([c.status, c.code], [503, "service_unavailable"], JSON.stringify(c));
    }
    const row = await checkAfterFault({ db: db!, limiter: limiter!, customers: cs, calls, sweep: LONG ? "wait" : "sweep-now" });
    await assertNewCallsFlow(server.url, db!, cs);
    report.add({ scenario: "Postgres restart (pg_ctl restart -m fast)", ...row, recoveredS: recovered.seconds, pass: true });
  });
});
