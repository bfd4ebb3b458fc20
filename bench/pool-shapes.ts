// `npm run bench:pool`: throughput of the real model at concurrency, per pool shape.
// For each shape (workers × threads per session) one real server process
// (src/main.ts on Postgres + Redis, INFERENCE_BACKEND=wasm) is started, then 1, 4 and 8
// closed-loop clients (one organization each, as separate customers would be) send the
// same photo for --seconds each. A refused client waits Retry-After and sends again, as
// the spec's client contract says. Printed per row: images per minute, p50/p99 of the
// 200s, refusals (all must carry Retry-After), client timeouts (must be 0), and the
// images-per-minute ratio against the first shape at the same client count, measured in
// the same run.
//
//   DATABASE_URL=… REDIS_URL=… npm run bench:pool -- [--seconds 60] [--shapes 1x2,2x1]
//     [--clients 1,4,8] [--input "0.4 MP JPEG"|"12 MP JPEG"] [--size full|preview]
import { availableParallelism, cpus, loadavg } from "node:os";
import { createCustomers, startLoadStack, storesSkip } from "../test/load/stack.ts";
import { outcomeOf, sendRemovebg, tally, type Outcome } from "../test/support/removebg-request.ts";
import { over } from "../test/support/server-process.ts";
import { benchInputs } from "./inputs.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const seconds = Number(arg("seconds", "60"));
const shapes = arg("shapes", "1x2,2x1").split(",").map((s) => {
  const [workers, threads] = s.split("x").map(Number);
  if (!workers || !threads) throw new Error(`--shapes: "${s}" is not workers x threads`);
  return { workers, threads, label: `${workers} × ${threads}` };
});
const clientCounts = arg("clients", "1,4,8").split(",").map(Number);
const inputName = arg("input", "0.4 MP JPEG");
const size = arg("size", "full");
/** A client gives up after the spec's advice for client timeouts (deadline 140 s + 10 s). */
const CLIENT_TIMEOUT_MS = 150_000;

if (storesSkip) {
  console.error(`bench:pool needs real stores: ${storesSkip}`);
  process.exit(2);
}

interface Row {
  shape: string;
  clients: number;
  wallS: number;
  ok: number;
  perMinute: number;
  p50Ms: number;
  p99Ms: number;
  jobMs: number;
  answers: Record<string, number>;
  refusalsWithoutRetryAfter: number;
  timeouts: number;
}

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : NaN);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (l: string) => console.error(`[pool] ${l}`);

const found = (await benchInputs()).find((i) => i.name === inputName);
if (!found) throw new Error(`--input: no bench input named "${inputName}"`);
const input = found;

/** Closed-loop clients for `seconds`; the calls still in flight at the end are awaited and counted. */
async function phase(url: string, keys: string[], shape: string): Promise<Row> {
  const send = over(url);
  const outcomes: Outcome[] = [];
  const latencies: number[] = [];
  const processing: number[] = [];
  let refusalsWithoutRetryAfter = 0;
  let timeouts = 0;
  const t0 = Date.now();
  const endAt = t0 + seconds * 1000;
  const client = async (key: string) => {
    while (Date.now() < endAt) {
      const start = performance.now();
      let res: Response;
      try {
        res = await sendRemovebg((p, init) => send(p, { ...init, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) }), key, {
          image_file: input.bytes,
          size,
        });
      } catch {
        timeouts++;
        continue;
      }
      const pm = Number(res.headers.get("x-processing-ms"));
      const out = await outcomeOf(res);
      outcomes.push(out);
      if (out.status === 200) {
        latencies.push(performance.now() - start);
        if (Number.isFinite(pm)) processing.push(pm);
      } else if (out.status === 429 || out.status === 503) {
        if (out.retryAfter === undefined) refusalsWithoutRetryAfter++;
        await sleep(Math.min(Number(out.retryAfter ?? 1) * 1000, Math.max(0, endAt - Date.now())));
      } else {
        throw new Error(`unexpected answer ${out.status} ${out.code ?? ""} (request ${out.requestId})`);
      }
    }
  };
  await Promise.all(keys.map(client));
  const wallS = (Date.now() - t0) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    shape,
    clients: keys.length,
    wallS,
    ok: latencies.length,
    perMinute: (latencies.length / wallS) * 60,
    p50Ms: pct(sorted, 0.5),
    p99Ms: pct(sorted, 0.99),
    jobMs: processing.length ? processing.reduce((a, b) => a + b, 0) / processing.length : NaN,
    answers: tally(outcomes),
    refusalsWithoutRetryAfter,
    timeouts,
  };
}

console.log(`# npm run bench:pool — ${new Date().toISOString()}`);
console.log(
  `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"} (availableParallelism ${availableParallelism()}), wasm, model small, input ${input.name} (${input.width} × ${input.height}), size ${size}, ${seconds} s per row, load ${loadavg()[0]!.toFixed(2)}`,
);
const rows: Row[] = [];
for (const shape of shapes) {
  log(`starting a server with POOL_SIZE=${shape.workers} THREADS_PER_SESSION=${shape.threads}`);
  const stack = await startLoadStack({
    INFERENCE_BACKEND: "wasm",
    POOL_SIZE: String(shape.workers),
    THREADS_PER_SESSION: String(shape.threads),
  });
  try {
    const customers = await createCustomers(stack.admin, Math.max(...clientCounts), 10_000_000);
    // One call per worker first: each session's first run pays for its own warm-up.
    await Promise.all(customers.slice(0, shape.workers).map((c) => sendRemovebg(over(stack.url), c.liveKey, { image_file: input.bytes, size }).then(outcomeOf)));
    for (const n of clientCounts) {
      log(`${shape.label}: ${n} clients for ${seconds} s`);
      const row = await phase(stack.url, customers.slice(0, n).map((c) => c.liveKey), shape.label);
      rows.push(row);
      log(`${shape.label}, ${n} clients: ${row.ok} images, ${row.perMinute.toFixed(1)}/min`);
    }
  } finally {
    await stack.close();
  }
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "–");
console.log("");
console.log("| shape (workers × threads) | clients | images/min | ÷ first shape | p50 s | p99 s | job s (X-Processing-Ms) | answers | refusals without Retry-After | client timeouts |");
console.log("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|");
for (const r of rows) {
  const base = rows.find((b) => b.clients === r.clients && b.shape === shapes[0]!.label)!;
  const answers = Object.entries(r.answers).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}: ${v}`).join(", ");
  console.log(
    `| ${r.shape} | ${r.clients} | ${f1(r.perMinute)} | ${(r.perMinute / base.perMinute).toFixed(2)} | ${f1(r.p50Ms / 1000)} | ${f1(r.p99Ms / 1000)} | ${f1(r.jobMs / 1000)} | ${answers} | ${r.refusalsWithoutRetryAfter} | ${r.timeouts} |`,
  );
}
console.log("");
console.log("images/min: 200s per wall minute of the row (calls in flight at the end are waited for and counted).");
console.log(`Load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
const bad = rows.some((r) => r.timeouts > 0 || r.refusalsWithoutRetryAfter > 0);
console.log(bad ? "RESULT: a client timed out or a refusal came without Retry-After" : "RESULT: no timeouts; every refusal carried Retry-After");
process.exit(bad ? 1 : 0);
