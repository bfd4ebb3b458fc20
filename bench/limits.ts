// Throughput of the limiters: hit, and acquire+release (one permit's whole life), for the
// in-process limiter and, when REDIS_URL is set, the Redis one. Each figure is the median
// ops/s of 5 runs. "seq" awaits every call before the next (one request's latency-bound
// view); "c32" keeps 32 calls in flight (many concurrent requests sharing one limiter).
//   node --import tsx bench/limits.ts        (REDIS_URL=redis://… to include Redis)
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { createMemoryLimiter, createRedisLimiter, type Limiter } from "../src/limits/index.ts";

export interface BenchRow {
  limiter: string;
  op: string;
  mode: string;
  opsPerSec: number;
  runs: number[];
}

const RUNS = 5;

async function drive(total: number, inFlight: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < total) await op(next++);
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return total / ((performance.now() - start) / 1000);
}

async function measure(
  limiter: string,
  make: () => Limiter,
  opName: string,
  mode: string,
  total: number,
  inFlight: number,
  op: (l: Limiter, tag: string, i: number) => Promise<unknown>,
): Promise<BenchRow> {
  const runs: number[] = [];
  for (let r = 0; r <= RUNS; r++) {
    const l = make();
    const tag = randomUUID(); // fresh keys per run, so runs do not see each other's counts
    try {
      const rate = await drive(total, inFlight, (i) => op(l, tag, i));
      if (r > 0) runs.push(rate); // run 0 warms up the JIT and the connection
    } finally {
      await l.close();
    }
  }
  const sorted = [...runs].sort((a, b) => a - b);
  return { limiter, op: opName, mode, opsPerSec: sorted[Math.floor(RUNS / 2)]!, runs };
}

// 1000 callers, 50 per minute each: a mix of allowed and refused hits, as in service.
const hit = (l: Limiter, tag: string, i: number) => l.hit(`bench:${tag}:${i % 1000}`, 50, 60_000);
// 100 orgs with a cap of 2: take a slot and give it back.
const acquireRelease = async (l: Limiter, tag: string, i: number) => {
  const r = await l.acquire(`bench:${tag}:${i % 100}`, 2, 30_000);
  if (r.ok) await r.permit.release();
};

export async function benchLimits(redisUrl = process.env.REDIS_URL): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const memory = () => createMemoryLimiter();
  rows.push(await measure("memory", memory, "hit", "seq", 200_000, 1, hit));
  rows.push(await measure("memory", memory, "acquire+release", "seq", 200_000, 1, acquireRelease));
  if (redisUrl) {
    const prefix = `pdbench:${randomUUID()}:`;
    const redis = () => createRedisLimiter({ url: redisUrl, keyPrefix: prefix });
    rows.push(await measure("redis", redis, "hit", "seq", 5_000, 1, hit));
    rows.push(await measure("redis", redis, "hit", "c32", 20_000, 32, hit));
    rows.push(await measure("redis", redis, "acquire+release", "seq", 5_000, 1, acquireRelease));
    rows.push(await measure("redis", redis, "acquire+release", "c32", 20_000, 32, acquireRelease));
  }
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await benchLimits();
  console.log("limiter  op               mode  median ops/s  (runs)");
  for (const r of rows) {
    const runs = r.runs.map((x) => Math.round(x)).join(", ");
    console.log(`${r.limiter.padEnd(8)} ${r.op.padEnd(16)} ${r.mode.padEnd(5)} ${Math.round(r.opsPerSec).toString().padStart(12)}  (${runs})`);
  }
  if (!process.env.REDIS_URL) console.log("(set REDIS_URL to include the Redis limiter)");
}
