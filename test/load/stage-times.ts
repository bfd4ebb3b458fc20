// Where a paid call's time goes at a fixed offered rate: the paid load, open
// loop, against a gateway on real Postgres + Redis and the stand-in product, then the
// gateway's own stage histograms (/metrics) read as a mean per stage over the run, with
// the event loop's delay. Not part of any suite.
//   node --import tsx test/load/stage-times.ts [rate=600] [seconds=10]
// Needs DATABASE_URL and REDIS_URL (as `npm run test:load`).
import { loadavg } from "node:os";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { runScenario } from "./run-scenario.ts";
import { buildScenarios } from "./scenarios.ts";
import { createCustomers, startLoadStack } from "./stack.ts";
import { startStubProduct } from "./suite.ts";
import { formatOpenLoopNotes } from "./table.ts";

const rate = Number(process.argv[2] ?? "600");
const seconds = Number(process.argv[3] ?? "10");
const stubDelayMs = 50;

/** sum and count of every histogram series whose line starts with `prefix`, by its labels. */
function sums(text: string, prefix: string): Map<string, { sum: number; count: number }> {
  const out = new Map<string, { sum: number; count: number }>();
  for (const line of text.split("\n")) {
    const m = line.match(/^(\w+)_(sum|count)(\{[^}]*\})? ([0-9.e+-]+)$/);
    if (!m || m[1] !== prefix) continue;
    const e = out.get(m[3] ?? "") ?? { sum: 0, count: 0 };
    e[m[2] as "sum" | "count"] = Number(m[4]);
    out.set(m[3] ?? "", e);
  }
  return out;
}

const product = await startStubProduct(stubDelayMs);
const stack = await startLoadStack({ PRODUCT_URL: product.url, GLOBAL_CONCURRENCY: "100000", TRUST_PROXY: "1" });
try {
  const customers = await createCustomers(stack.admin, 65, 100_000_000);
  const capCustomer = customers.pop()!;
  const set = await buildScenarios({ customers, capCustomer, stubDelayMs, orgCap: 2, connections: { paid: 128, rejections: 64, overCap: 64 } });
  const stores = { database: new URL(stack.env.DATABASE_URL!).pathname.slice(1), redisPort: new URL(stack.env.REDIS_URL!).port };
  const at = { url: stack.url, serverPid: stack.server.pid, serverLines: stack.server.lines, settle: async () => {}, stores };
  await runScenario({ ...set.paid, name: "warm-up" }, { ...at, seconds: 2 });
  const metrics = async () => (await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })).text();
  const before = await metrics();
  console.log(`# stage times: paid at ${rate}/s, ${seconds} s, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  const r = await runScenario({ ...set.paidAtTargetRate, name: set.paidAtTargetRate.name.replace(/at \d+\/s/, `at ${rate}/s`), rate }, { ...at, seconds });
  const after = await metrics();
  console.log(`answers ${JSON.stringify(r.answers)}, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, cpu srv/gen/stores ${r.cpu.server.toFixed(2)}/${r.cpu.generator.toFixed(2)}/${r.cpu.stores?.toFixed(2)}`);
  // CPU per answer: the machine-independent part (cores × wall seconds ÷ answers).
  const n = Object.values(r.answers).reduce((a, b) => a + b, 0);
  const wall = r.seconds; // the open loop's seconds of offering; its tail is inside the CPU readings
  console.log(`CPU per answer: gateway ${((r.cpu.server * wall * 1000) / n).toFixed(2)} ms, Postgres + Redis ${(((r.cpu.stores ?? NaN) * wall * 1000) / n).toFixed(2)} ms`);
  console.log(formatOpenLoopNotes([r]));
  const b = sums(before, "pixeldrop_gateway_stage_duration_seconds");
  for (const [labels, a] of sums(after, "pixeldrop_gateway_stage_duration_seconds")) {
    const p = b.get(labels) ?? { sum: 0, count: 0 };
    const n = a.count - p.count;
    console.log(`stage ${labels}: mean ${(((a.sum - p.sum) / n) * 1000).toFixed(1)} ms over ${n}`);
  }
  for (const line of after.split("\n")) if (/^nodejs_eventloop_lag_(p50|p99|max)_seconds/.test(line)) console.log(line);
} finally {
  await stack.close();
  await product.stop();
}
