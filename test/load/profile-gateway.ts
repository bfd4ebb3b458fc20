// CPU profile of the gateway under the load run's scenarios: the server runs
// with `node --cpu-prof`, one scenario drives it, and the profile's top entries (self
// time by function and by file or package) are printed. Not part of any suite.
//   node --import tsx test/load/profile-gateway.ts <no-key-embedded | unknown-key | bad-parameter | over-cap | paid | paid-rate> [seconds] [rate]
// (paid-rate: the paid load offered at the target's rate, or at `rate`, open loop).
// PROFILE_KEEP=1 leaves the .cpuprofile files in the directory it names, for a viewer.
// All but the first need DATABASE_URL and REDIS_URL (as `npm run test:load`).
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { runScenario } from "./run-scenario.ts";
import { buildScenarios } from "./scenarios.ts";
import { createCustomers, startLoadStack } from "./stack.ts";
import { startStubProduct } from "./suite.ts";
import { formatOpenLoopNotes } from "./table.ts";
import { startServer } from "../support/server-process.ts";

const which = process.argv[2] ?? "no-key-embedded";
const seconds = Number(process.argv[3] ?? "10");
const rate = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const profDir = await mkdtemp(join(tmpdir(), "pd-prof-"));
// --cpu-prof is refused in NODE_OPTIONS, so the server's command line carries it.
const command = { file: process.execPath, args: ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--import", "tsx", "src/main.ts"] };

interface ProfNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Monotonic microseconds: V8 stamps its samples on the same clock (CLOCK_MONOTONIC) as process.hrtime. */
const monoUs = () => Number(process.hrtime.bigint() / 1000n);
let windowUs: [number, number] = [0, Infinity];

/** Only the samples taken while the load ran (not start-up, migrations or shutdown). */
function loadWindow(p: Profile): Profile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let t = p.startTime;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t >= windowUs[0] && t <= windowUs[1]) {
      samples.push(id);
      timeDeltas.push(dt);
    }
  });
  return { ...p, samples, timeDeltas };
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) return url.slice(nm + "node_modules/".length);
  const src = url.indexOf("/src/");
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, "") || "(native)";
}

function packageOf(url: string): string {
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith("node:")) return url;
  const src = url.indexOf("/src/");
  if (src >= 0) return url.slice(src + 1);
  return url === "" ? "(native / V8)" : url;
}

function top(p: Profile, key: (n: ProfNode) => string, n: number): [string, number][] {
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    const k = key(byId.get(id)!);
    self.set(k, (self.get(k) ?? 0) + dt);
  });
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => [k, v / total]);
}

async function report(requests: number): Promise<void> {
  const files = (await readdir(profDir)).filter((f) => f.endsWith(".cpuprofile"));
  // The main thread's profile is the largest (workers of the stub engine write their own).
  let best: Profile | undefined;
  let bestSize = 0;
  for (const f of files) {
    const text = await readFile(join(profDir, f), "utf8");
    if (text.length > bestSize) {
      bestSize = text.length;
      best = JSON.parse(text) as Profile;
    }
  }
  if (!best) throw new Error("no profile written");
  best = loadWindow(best);
  const totalUs = best.timeDeltas.reduce((a, b) => a + b, 0);
  const idle = top(best, (x) => x.callFrame.functionName, 50).find(([k]) => k === "(idle)")?.[1] ?? 0;
  console.log(`\n### ${which}: ${requests} answers in ${seconds} s; profile of the load's ${(totalUs / 1e6).toFixed(1)} s, idle ${(idle * 100).toFixed(0)} %`);
  console.log(`busy CPU per answer ≈ ${((totalUs * (1 - idle)) / 1000 / requests).toFixed(2)} ms\n`);
  console.log("| self time | function (file) |\n|---|---|");
  for (const [k, v] of top(best, (x) => `${x.callFrame.functionName || "(anonymous)"} (${shortUrl(x.callFrame.url)})`, 15)) {
    console.log(`| ${(v * 100).toFixed(1)} % | ${k} |`);
  }
  console.log("\n| self time | package or file |\n|---|---|");
  for (const [k, v] of top(best, (x) => packageOf(x.callFrame.url), 12)) console.log(`| ${(v * 100).toFixed(1)} % | ${k} |`);
  // Who makes the system calls: writev's time by the nearest caller in a package or file of ours.
  const parent = new Map<number, ProfNode>();
  for (const x of best.nodes) for (const c of x.children ?? []) parent.set(c, x);
  const callerOf = (x: ProfNode): string => {
    for (let p = parent.get(x.id); p; p = parent.get(p.id)) {
      const pk = packageOf(p.callFrame.url);
      if (pk !== "(native / V8)" && !pk.startsWith("node:")) return pk;
    }
    return "(none)";
  };
  const writev = top(best, (x) => (x.callFrame.functionName === "writev" ? `writev ← ${callerOf(x)}` : ""), 8).filter(([k]) => k !== "");
  // Inclusive view: each sample charged to the deepest frame in our own src/ (the code
  // that asked for the work, whatever library or native code did it).
  const ownCaller = (x: ProfNode): string => {
    for (let p: ProfNode | undefined = x; p; p = parent.get(p.id)) {
      if (p.callFrame.url.includes("/src/")) return `${p.callFrame.functionName || "(anonymous)"} (${shortUrl(p.callFrame.url)})`;
    }
    return x.callFrame.functionName === "(idle)" ? "(idle)" : "(no frame of ours)";
  };
  console.log("\n| time | deepest frame of ours on the stack |\n|---|---|");
  for (const [k, v] of top(best, ownCaller, 15)) console.log(`| ${(v * 100).toFixed(1)} % | ${k} |`);
  // Native and Node-internal time charged to the nearest package or file of ours above it.
  const nearestPackage = (x: ProfNode): string => {
    for (let p: ProfNode | undefined = x; p; p = parent.get(p.id)) {
      const pk = packageOf(p.callFrame.url);
      if (pk !== "(native / V8)" && !pk.startsWith("node:")) return pk;
    }
    return x.callFrame.functionName.startsWith("(") ? x.callFrame.functionName : "(Node internals only)";
  };
  console.log("\n| time | nearest package or file above the sample (native and node: time charged to it) |\n|---|---|");
  for (const [k, v] of top(best, nearestPackage, 15)) console.log(`| ${(v * 100).toFixed(1)} % | ${k} |`);
  if (writev.length) {
    console.log("\n| self time | writev, by the nearest caller outside Node's own modules |\n|---|---|");
    for (const [k, v] of writev) console.log(`| ${(v * 100).toFixed(1)} % | ${k} |`);
  }
}

console.log(`# CPU profile: ${which}, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
let answers = 0;
if (which === "no-key-embedded") {
  const dataDir = await mkdtemp(join(tmpdir(), "pd-prof-data-"));
  const server = await startServer({ DATA_DIR: dataDir, TRUST_PROXY: "1" }, { timeoutMs: 300_000, command });
  const set = await buildScenarios({ customers: [{ orgId: "", appId: "", liveKey: "x", testKey: "x" }], capCustomer: { orgId: "", appId: "", liveKey: "x", testKey: "x" }, stubDelayMs: 0, orgCap: 2, connections: { paid: 1, rejections: 64, overCap: 1 } });
  windowUs[0] = monoUs();
  const r = await runScenario(set.noKey, { url: server.url, serverPid: server.pid, serverLines: server.lines, seconds, settle: async () => {} });
  windowUs[1] = windowUs[0] + seconds * 1e6;
  answers = Object.values(r.answers).reduce((a, b) => a + b, 0);
  console.log(`req/s ${r.reqPerSec.toFixed(0)}, p99 ${r.p99} ms, answers ${JSON.stringify(r.answers)}`);
  await server.kill("SIGTERM");
  await rm(dataDir, { recursive: true, force: true });
} else {
  const stubDelayMs = 50;
  const product = await startStubProduct(stubDelayMs);
  const stack = await startLoadStack({ PRODUCT_URL: product.url, GLOBAL_CONCURRENCY: "100000", TRUST_PROXY: "1" }, undefined, command);
  try {
    const customers = await createCustomers(stack.admin, 65, 100_000_000);
    const capCustomer = customers.pop()!;
    const set = await buildScenarios({ customers, capCustomer, stubDelayMs, orgCap: 2, connections: { paid: 128, rejections: 64, overCap: 64 } });
    const atRate = rate === undefined ? set.paidAtTargetRate : { ...set.paidAtTargetRate, name: `${set.paid.name}, open loop at ${rate}/s`, rate };
    const byName: Record<string, typeof set.paid> = {
      paid: set.paid,
      "paid-rate": atRate,
      "unknown-key": set.badKeySpread,
      "bad-parameter": set.badParameter,
      "over-cap": set.overOrgCap,
    };
    const sc = byName[which];
    if (!sc) throw new Error(`unknown scenario ${which}; one of no-key-embedded, ${Object.keys(byName).join(", ")}`);
    windowUs[0] = monoUs();
    const r = await runScenario(sc, { url: stack.url, serverPid: stack.server.pid, serverLines: stack.server.lines, seconds, settle: async () => {} });
    windowUs[1] = windowUs[0] + seconds * 1e6;
    answers = Object.values(r.answers).reduce((a, b) => a + b, 0);
    console.log(`req/s ${r.reqPerSec.toFixed(0)}, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, answers ${JSON.stringify(r.answers)}`);
    if (r.offered) console.log(formatOpenLoopNotes([r]));
  } finally {
    await stack.close();
    await product.stop();
  }
}
await report(answers);
if (process.env.PROFILE_KEEP === "1") console.log(`\nprofiles kept in ${profDir}`);
else await rm(profDir, { recursive: true, force: true });
