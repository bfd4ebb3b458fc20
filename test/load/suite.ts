// The gateway load suite, shared by `npm run test:load` (long, prints the table against
// the targets) and test/load/load.test.ts (a few seconds each, correctness only).
//
// Set-up: a gateway process (src/main.ts) on real Postgres + Redis, with PRODUCT_URL
// pointing at a fixed-delay stand-in product (stub-product.ts), so what is measured is
// the gateway: auth, limits, reserve + capture, request log, the product round trip.
// The in-process stub engine is measured separately (engineScenario) because its
// imaging work, not the gateway, is what bounds it.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { checkMoney, heldPermits, waitForPermits, type MoneyReport } from "./checks.ts";
import { runScenario, processCpuSeconds, type Scenario, type ScenarioResult } from "./run-scenario.ts";
import { buildScenarios } from "./scenarios.ts";
import { createCustomers, startLoadStack, type Customer, type LoadStack } from "./stack.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

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
export async function startStubProduct(delayMs: number): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "test/load/stub-product.ts", String(delayMs)], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      buf += d;
      const m = /\{"port":(\d+)\}/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`stub product exited (${code}) before listening`)));
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
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
    const settle = async () => {
      await waitForPermits(s.redis, permitKeys);
    };
    const productCpu0 = processCpuSeconds(product.pid);
    const results: ScenarioResult[] = [];
    const run = async (sc: Scenario) => {
      log(`running: ${sc.name} (${sc.connections} connections, ${o.seconds} s)`);
      const r = await runScenario(sc, { url: s.url, serverPid: s.server.pid, db: s.db, seconds: o.seconds, settle });
      results.push(r);
      return r;
    };
    // A short warm-up so JIT and connection pools are not part of the first row.
    await runScenario({ ...set.paid, name: "warm-up" }, { url: s.url, serverPid: s.server.pid, db: s.db, seconds: 2, settle });
    await run(set.paid);
    const paidMoney = await checkMoney(s.db, customers.map((c: Customer) => c.orgId));
    await run(set.badKeySpread);
    await run(set.badKeyOneIp);
    await run(set.badParameter);
    await run(set.overOrgCap);
    const capMoney = await checkMoney(s.db, [capCustomer.orgId]);
    const leakedPermits = await heldPermits(s.redis, permitKeys);
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
