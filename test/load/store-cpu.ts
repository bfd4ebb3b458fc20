// CPU used by the run's own Postgres backends and its Redis server, beside the gateway's:
// on a 2-core box the paid path's cost is split between them, and the fixed-rate row is
// only readable knowing how much of the machine the stores took. Found in /proc (Linux):
// a Postgres backend names its database in its command line ("postgres: user db addr
// state"), and the load run's database is a scratch one of its own, so other people's
// backends on the same server are not counted; Redis is matched by its port.
import { readdirSync, readFileSync } from "node:fs";
import { processCpuSeconds } from "./run-scenario.ts";

function cmdline(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** PIDs of the Postgres backends connected to `database` and of the Redis server on `redisPort`. */
export function storePids(database: string, redisPort: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const c = cmdline(pid);
    if ((c.startsWith("postgres: ") && c.split(" ")[2] === database) || (c.startsWith("redis-server") && c.includes(`:${redisPort}`))) out.push(Number(pid));
  }
  return out;
}

/** CPU seconds of the stores so far; a backend that started since `from` counts from zero, one that ended is lost (pooled backends live long). */
export function storeCpuSeconds(database: string, redisPort: string): Map<number, number> {
  return new Map(storePids(database, redisPort).map((pid) => [pid, processCpuSeconds(pid)]));
}

/** CPU seconds the stores used between two readings of storeCpuSeconds. */
export function storeCpuBetween(from: Map<number, number>, to: Map<number, number>): number {
  let sum = 0;
  for (const [pid, cpu] of to) if (Number.isFinite(cpu)) sum += cpu - (from.get(pid) ?? 0);
  return sum;
}
