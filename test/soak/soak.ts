// `npm run test:soak`: mixed traffic against the real model for a long time, watching
// the server's memory. Passes when no unexpected answer came back, the books balance,
// no permit is left taken and RSS shows no growth trend above the threshold.
//
// Settings: SOAK_MINUTES (30; or --minutes N), SOAK_SAMPLE_S (10), SOAK_WARMUP_S
// (60: left out of the trend), SOAK_MAX_SLOPE (1.0 MB/min), SOAK_PAID_CALLERS (2),
// INFERENCE_BACKEND (wasm), POOL_SIZE (1). Needs DATABASE_URL and REDIS_URL.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { checkMoney, heldPermits, waitForPermits } from "../load/checks.ts";
import { createCustomers, SOAK_REDIS_DB, startLoadStack, storesSkip } from "../load/stack.ts";
import { over } from "../support/server-process.ts";
import { afterWarmup, readRssMb, slopeMbPerMin, type RssSample } from "./rss.ts";
import { EXPECTED_SOAK, mix, runCaller, type Tally } from "./traffic.ts";

const { values: flags } = parseArgs({ options: { minutes: { type: "string" } }, strict: false });
const num = (name: string, def: number) => (process.env[name] ? Number(process.env[name]) : def);
const minutes = Number(flags.minutes ?? process.env.SOAK_MINUTES ?? 30);
const sampleS = num("SOAK_SAMPLE_S", 10);
const warmupS = num("SOAK_WARMUP_S", 60);
const maxSlope = num("SOAK_MAX_SLOPE", 1.0);
const log = (l: string) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${l}`);

if (storesSkip) {
  console.error(`test:soak needs real stores: ${storesSkip}`);
  process.exit(2);
}

console.log(`# Pixeldrop soak, ${new Date().toISOString()}, ${minutes} min, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
const stack = await startLoadStack(
  { INFERENCE_BACKEND: process.env.INFERENCE_BACKEND ?? "wasm", POOL_SIZE: process.env.POOL_SIZE ?? "1" },
  SOAK_REDIS_DB,
);
let failed = false;
try {
  const paidN = num("SOAK_PAID_CALLERS", 2);
  const [crowded, capped, ...paid] = await createCustomers(stack.admin, paidN + 2, 10_000_000);
  // 50 KRW: two preview calls (22 each), then 402.
  const [poorOrg] = await createCustomers(stack.admin, 1, 50);
  await stack.admin("PATCH", `/orgs/${capped!.orgId}`, { dailyLimitKrw: 44 });
  const orgs = [crowded!, poorOrg!, capped!, ...paid];
  const callers = mix({
    paid: paid.map((c) => c.liveKey),
    crowded: crowded!.liveKey,
    poor: poorOrg!.liveKey,
    capped: capped!.liveKey,
    test: crowded!.testKey,
  });
  log(`server pid ${stack.server.pid}; ${callers.length} callers; sampling RSS every ${sampleS} s`);

  const t0 = Date.now();
  const endAt = t0 + minutes * 60_000;
  const samples: RssSample[] = [];
  const sample = async () => {
    const mb = await readRssMb(stack.server.pid);
    samples.push({ t: (Date.now() - t0) / 1000, mb });
    if (samples.length % 6 === 1) log(`RSS ${mb.toFixed(0)} MB at ${((Date.now() - t0) / 60_000).toFixed(1)} min`);
  };
  await sample();
  const sampler = setInterval(() => void sample(), sampleS * 1000);
  const tally: Tally = { byKind: new Map(), clientFailures: 0, all: [] };
  const send = over(stack.url);
  await Promise.all(callers.map((c) => runCaller(c, send, () => Date.now() >= endAt, tally)));
  clearInterval(sampler);
  await sample();

  const permitKeys = ["global", ...orgs.map((o) => `org-live:${o.orgId}`)];
  await waitForPermits(stack.redis, permitKeys, 60_000);
  const leaked = await heldPermits(stack.redis, permitKeys);
  const money = await checkMoney(stack.db, orgs.map((o) => o.orgId)).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));

  const totals: Record<string, number> = {};
  for (const o of tally.all) {
    const label = o.code ? `${o.status} ${o.code}` : String(o.status);
    totals[label] = (totals[label] ?? 0) + 1;
  }
  const unexpected = Object.keys(totals).filter((k) => !EXPECTED_SOAK.has(k));
  const trend = afterWarmup(samples, warmupS);
  const slope = slopeMbPerMin(trend);
  const mbs = samples.map((s) => s.mb);

  console.log(`\n## Soak summary (${((Date.now() - t0) / 60_000).toFixed(1)} min, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")})\n`);
  console.log("| caller | answers |");
  console.log("|---|---|");
  for (const [kind, counts] of tally.byKind) {
    console.log(`| ${kind} | ${Object.entries(counts).map(([k, v]) => `${k}: ${v}`).join(", ")} |`);
  }
  console.log(`\nall answers: ${Object.entries(totals).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}: ${v}`).join(", ")}`);
  console.log(`unexpected answers: ${unexpected.length ? unexpected.join(", ") : "none"}; client timeouts/transport errors: ${tally.clientFailures}`);
  console.log(
    `RSS: start ${mbs[0]!.toFixed(0)} MB, end ${mbs[mbs.length - 1]!.toFixed(0)} MB, max ${Math.max(...mbs).toFixed(0)} MB; ` +
      `trend after the first ${warmupS} s: ${slope.toFixed(2)} MB/min over ${trend.length} samples (threshold ${maxSlope} MB/min)`,
  );
  console.log(
    money instanceof Error
      ? `money: FAILED: ${money.message}`
      : `money: ${money.captures} captures = ${money.logged200} live-key 200s over ${money.orgs} orgs, every hold settled; permits still held: ${leaked}`,
  );
  const slopeOk = trend.length >= 3 && slope <= maxSlope;
  failed = unexpected.length > 0 || tally.clientFailures > 0 || leaked > 0 || !slopeOk || money instanceof Error;
  console.log(failed ? `RESULT: FAILED${slopeOk ? "" : " (RSS trend above threshold or too few samples)"}` : "RESULT: passed");
} catch (err) {
  failed = true;
  console.error(err);
} finally {
  await stack.close();
}
process.exit(failed ? 1 : 0);
