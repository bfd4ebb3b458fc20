// The gateway load suite, shared by `npm run test:load` (long, prints the table against
// the targets) and test/load/load.test.ts (a few seconds each, correctness only).
//
// Set-up: a gateway process (src/main.ts) on real Postgres + Redis, with PRODUCT_URL
// pointing at a fixed-delay stand-in product (stub-product.ts), so what is measured is
// the gateway: auth, limits, reserve + capture, request log, the product round trip.
// The in-process stub engine is measured separately (engineScenario) because its
// imaging work, not the gateway, is what bounds it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChildServer, type ChildServer } from "./child-server.ts";
import { startServer } from "../support/server-process.ts";
import { checkMoney, heldPermits, waitForPermits, type MoneyReport } from "./checks.ts";
import { runScenario, processCpuSeconds, type Scenario, type ScenarioResult } from "./run-scenario.ts";
import { buildScenarios } from "./scenarios.ts";
import { createCustomers, startLoadStack, type Customer, type LoadStack } from "./stack.ts";

export interface SuiteOptions {
  seconds: number;
  stubDelayMs: number;
  orgs: number;
  paidConnections: number;
  rejectionConnections: number;
  overCapConnections: number;
  /** Extra server environment (e.g. DB_POOL_MAX). */
  serverEnv?: Record<string, string>;
  log?: (line: string) => void;
}

export interface SuiteRun {
  results: ScenarioResult[];
  money: { paid: MoneyReport; overCap: MoneyReport };
  /** Permits still held after each run settled (must be 0). */
  leakedPermits: number;
  stubProductCpu: number;
}

export const ORG_CAP = 2;

/** Starts the stand-in product; resolves with its URL and a stop function. */
export function startStubProduct(delayMs: number): Promise<ChildServer> {
  return startChildServer("test/load/stub-product.ts", [String(delayMs)]);
}

export async function runGatewaySuite(o: SuiteOptions): Promise<SuiteRun> {
  const log = o.log ?? (() => {});
  const product = await startStubProduct(o.stubDelayMs);
  let stack: LoadStack | undefined;
  try {
    stack = await startLoadStack({
      PRODUCT_URL: product.url,
      // The load run is about the gateway's own limits; the global cap is not the subject.
      GLOBAL_CONCURRENCY: "100000",
      TRUST_PROXY: "1",
      ...o.serverEnv,
    });
    log(`server pid ${stack.server.pid} on ${stack.url}, stand-in product pid ${product.pid} (${o.stubDelayMs} ms)`);
    const customers = await createCustomers(stack.admin, o.orgs + 1, 100_000_000);
    const capCustomer = customers.pop()!;
    const set = await buildScenarios({
      customers,
      capCustomer,
      stubDelayMs: o.stubDelayMs,
      orgCap: ORG_CAP,
      connections: { paid: o.paidConnections, rejections: o.rejectionConnections, overCap: o.overCapConnections },
    });
    const permitKeys = ["global", ...customers.map((c) => `org-live:${c.orgId}`), `org-live:${capCustomer.orgId}`];
    const s = stack;
    const stores = { database: new URL(s.env.DATABASE_URL!).pathname.slice(1), redisPort: new URL(s.env.REDIS_URL!).port };
    const settle = async () => {
      await waitForPermits(s.redis, permitKeys);
    };
    const productCpu0 = processCpuSeconds(product.pid);
    const results: ScenarioResult[] = [];
    const run = async (sc: Scenario, baseline?: ScenarioResult["baseline"]) => {
      log(`running: ${sc.name} (${sc.connections} connections${sc.rate ? `, ${sc.rate}/s offered` : ""}, ${o.seconds} s)`);
      const r = await runScenario(sc, { url: s.url, serverPid: s.server.pid, serverLines: s.server.lines, seconds: o.seconds, settle, stores });
      results.push({ ...r, ...(baseline ? { baseline } : {}) });
      return r;
    };
    // Baselines of this run, on this machine, while the gateway idles: the same 401
    // load against a bare Hono app, and the paid load against the stand-in product alone.
    const bare = await measureBaseline("bare Hono 401", set.noKey, o.seconds, log);
    const alone = (sc: Scenario) => runScenario({ ...sc, name: "stand-in alone" }, { url: product.url, serverPid: product.pid, seconds: o.seconds, settle: async () => {} });
    const standIn = await alone(set.paid);
    const standInBaseline = { name: `stand-in product alone (${o.stubDelayMs} ms)`, reqPerSec: standIn.reqPerSec };
    const standInAtRate = await alone(set.paidAtTargetRate);
    const standInAtRateBaseline = { name: `stand-in product alone at ${set.paidAtTargetRate.rate}/s`, reqPerSec: standInAtRate.reqPerSec, p50: standInAtRate.p50, p99: standInAtRate.p99 };
    // A short warm-up so JIT and connection pools are not part of the first row.
    await runScenario({ ...set.paid, name: "warm-up" }, { url: s.url, serverPid: s.server.pid, serverLines: s.server.lines, seconds: 2, settle });
    // The fixed rate first, so it is not measured in the wake of the saturating closed loop.
    await run(set.paidAtTargetRate, standInAtRateBaseline);
    await run(set.paid, standInBaseline);
    const paidMoney = await checkMoney(s.db, customers.map((c: Customer) => c.orgId));
    await run(set.badKeySpread, bare);
    await run(set.badKeyOneIp);
    await run(set.badParameter);
    await run(set.overOrgCap);
    const capMoney = await checkMoney(s.db, [capCustomer.orgId]);
    const leakedPermits = await heldPermits(s.redis, permitKeys);
    await stack.close();
    stack = undefined;
    // The default deployment: no DATABASE_URL or REDIS_URL (PGlite, in-process limiter).
    results.push({ ...(await runEmbedded(set.noKey, o.seconds, log)), baseline: bare });
    return {
      results,
      money: { paid: paidMoney, overCap: capMoney },
      leakedPermits,
      stubProductCpu: processCpuSeconds(product.pid) - productCpu0,
    };
  } finally {
    await stack?.close();
    await product.stop();
  }
}

/** `sc` against the bare Hono app of bench/refusals-bare.ts (answers counted by the client). */
async function measureBaseline(name: string, sc: Scenario, seconds: number, log: (l: string) => void): Promise<{ name: string; reqPerSec: number }> {
  const bare = await startChildServer("bench/refusals-bare.ts");
  try {
    log(`baseline: ${name} (${sc.connections} connections, ${seconds} s)`);
    const r = await runScenario({ ...sc, name }, { url: bare.url, serverPid: bare.pid, seconds, settle: async () => {} });
    return { name, reqPerSec: r.reqPerSec };
  } finally {
    await bare.stop();
  }
}

/** `sc` against a server on the embedded defaults (PGlite in a scratch folder, in-process limiter). */
async function runEmbedded(sc: Scenario, seconds: number, log: (l: string) => void): Promise<ScenarioResult> {
  const dataDir = await mkdtemp(join(tmpdir(), "pd-load-embedded-"));
  const server = await startServer({ DATA_DIR: dataDir, TRUST_PROXY: "1" }, { timeoutMs: 300_000 });
  try {
    const name = `${sc.name}, embedded default`;
    log(`running: ${name} (${sc.connections} connections, ${seconds} s)`);
    return await runScenario({ ...sc, name }, { url: server.url, serverPid: server.pid, serverLines: server.lines, seconds, settle: async () => {} });
  } finally {
    await server.kill("SIGTERM");
    await rm(dataDir, { recursive: true, force: true });
  }
}
