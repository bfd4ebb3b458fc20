// Drives one scenario with autocannon's programmatic API against a running server and
// reads back what the server itself recorded: its access log (status and error code
// of every answer it gave), and the CPU time the server and this generator process
// used, since both share the machine's cores.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import autocannon from "autocannon";
import { runOpenLoop } from "./open-loop.ts";
import { storeCpuBetween, storeCpuSeconds } from "./store-cpu.ts";

export interface Scenario {
  name: string;
  connections: number;
  /** Headers and body of connection `i` (e.g. its own org's key). */
  connection(i: number): { headers: Record<string, string>; body: Uint8Array };
  /** Extra headers per request (e.g. a different client address each time). */
  perRequest?: (n: number) => Record<string, string>;
  /** Answers ("200", "429 rate_limited", …) this scenario may produce; anything else is a failure. */
  expected: readonly string[];
  /** The fixed delay inside each answer (the stub model's), subtracted for "added" latency. */
  baseDelayMs: number;
  target: { reqPerSec: number; addedP99Ms?: number; p99Ms?: number };
  /**
   * Offered requests per second for an open-loop run (open-loop.ts): requests leave on
   * a fixed schedule over `connections` sockets and latency counts from the schedule.
   * Absent: a closed loop (autocannon), each connection sending as soon as answered.
   */
  rate?: number;
  /** For an open-loop run: seconds at the same rate before the measured ones (open-loop.ts). */
  warmupSeconds?: number;
}

export interface ScenarioResult {
  name: string;
  seconds: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  addedP99?: number;
  /** What the server answered, by "status code" label (its access log; the client's status counts for a baseline). */
  answers: Record<string, number>;
  /** Labels outside `expected`. */
  unexpected: string[];
  /** What the generator saw: responses by status, and transport errors/timeouts. */
  client: { byStatus: Record<string, number>; errors: number; timeouts: number };
  /** Open loop only: the offered rate, and how late the sends left (p99 ms) when no socket was free or this process was busy. */
  offered?: { rate: number; sendLagP99: number; p99BySecond: number[]; warmupSeconds: number };
  /** CPU seconds per wall second: 1.0 = one core busy. `stores`: the run's Postgres backends and Redis (store-cpu.ts), when known. */
  cpu: { server: number; generator: number; stores?: number };
  load1: number;
  target: Scenario["target"];
  met: boolean;
  /** The same load against a baseline measured in the same run (bare Hono, the stand-in product alone). */
  baseline?: { name: string; reqPerSec: number; p50?: number; p99?: number };
}

/** The access-log lines of POST /v1.0/removebg answers (src/metrics/http.ts writes one per answer). */
function isRemovebgAnswer(line: string): boolean {
  return line.includes('"msg":"request"') && line.includes('"route":"/v1.0/removebg"');
}

/**
 * Answer counts by label ("200", "401 invalid_api_key") from the server's access log,
 * lines `from` onwards. Unattributable refusals write no request-log row, so
 * the access log is the server's own record of every answer.
 */
export function accessLogCounts(lines: readonly string[], from: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = from; i < lines.length; i++) {
    const line = lines[i]!;
    if (!isRemovebgAnswer(line)) continue;
    const e = JSON.parse(line) as { status: number; code?: string };
    const label = e.code ? `${e.status} ${e.code}` : String(e.status);
    out[label] = (out[label] ?? 0) + 1;
  }
  return out;
}

/** Answers the client received that the server's access log does not show (must be 0: every answer is logged before it leaves). */
export function unloggedAnswers(r: ScenarioResult): number {
  const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
  return Math.max(0, sum(r.client.byStatus) - sum(r.answers));
}

/** Waits until the server's output stops growing for 300 ms (at most ~10 s): requests in flight have answered. */
async function quietLines(lines: readonly string[]): Promise<void> {
  let last = lines.length;
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 300));
    if (lines.length === last) return;
    last = lines.length;
  }
}

/** user + system CPU seconds of a process, from /proc (Linux). */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the ")" that ends the command name; utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

export async function runScenario(
  s: Scenario,
  o: {
    url: string;
    serverPid: number;
    /** The server's output lines (its access log); absent for a baseline, counted from the client. */
    serverLines?: readonly string[];
    seconds: number;
    settle: () => Promise<void>;
    path?: string;
    /** The server's stores, to count their CPU: its database's name and the Redis port. */
    stores?: { database: string; redisPort: string };
  },
): Promise<ScenarioResult> {
  const linesBefore = o.serverLines?.length ?? 0;
  const stores0 = o.stores && storeCpuSeconds(o.stores.database, o.stores.redisPort);
  const serverCpu0 = processCpuSeconds(o.serverPid);
  const genCpu0 = process.cpuUsage();
  const wall0 = performance.now();

  const url = `${o.url}${o.path ?? "/v1.0/removebg"}`;
  const result = s.rate === undefined ? await closedLoop(s, url, o.seconds) : await runOpenLoop({ ...s, url, rate: s.rate, seconds: o.seconds, timeoutMs: TIMEOUT_S * 1000, warmupSeconds: s.warmupSeconds });
  const wall = (performance.now() - wall0) / 1000;
  const genCpu = process.cpuUsage(genCpu0);
  const serverCpu = processCpuSeconds(o.serverPid) - serverCpu0;
  const storesCpu = o.stores && stores0 ? storeCpuBetween(stores0, storeCpuSeconds(o.stores.database, o.stores.redisPort)) : undefined;
  // Requests still in flight when autocannon stopped finish on the server; wait for
  // them (permits given back, and the log no longer growing) so they count here and
  // not in the next scenario.
  await o.settle();
  const byStatus = result.byStatus;
  let answers = byStatus;
  if (o.serverLines) {
    await quietLines(o.serverLines);
    answers = accessLogCounts(o.serverLines, linesBefore);
  }
  const completed = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const reqPerSec = completed / result.duration;
  const addedP99 = s.target.addedP99Ms === undefined ? undefined : result.latency.p99 - s.baseDelayMs;
  // A baseline has no access log and is not ours to judge: only its rate is used.
  const unexpected = o.serverLines ? Object.keys(answers).filter((k) => !s.expected.includes(k)) : [];
  const met =
    reqPerSec >= s.target.reqPerSec &&
    (s.target.addedP99Ms === undefined || (addedP99 ?? Infinity) < s.target.addedP99Ms) &&
    (s.target.p99Ms === undefined || result.latency.p99 < s.target.p99Ms);
  return {
    name: s.name,
    seconds: result.duration,
    reqPerSec,
    p50: result.latency.p50,
    p99: result.latency.p99,
    addedP99,
    answers,
    unexpected,
    client: { byStatus, errors: result.errors, timeouts: result.timeouts },
    cpu: { server: serverCpu / wall, generator: (genCpu.user + genCpu.system) / 1e6 / wall, ...(storesCpu === undefined ? {} : { stores: storesCpu / wall }) },
    load1: loadavg()[0],
    ...("sendLagP99" in result ? { offered: { rate: s.rate!, sendLagP99: result.sendLagP99, p99BySecond: result.p99BySecond, warmupSeconds: result.warmupSeconds } } : {}),
    target: s.target,
    met,
  };
}

const TIMEOUT_S = 30;

/** The closed loop: `s.connections` autocannon connections, each sending its next request when answered. */
async function closedLoop(s: Scenario, url: string, seconds: number) {
  let conn = 0;
  let reqNo = 0;
  const first = s.connection(0);
  const result = await autocannon({
    url,
    method: "POST",
    connections: s.connections,
    duration: seconds,
    timeout: TIMEOUT_S,
    headers: first.headers,
    body: Buffer.from(first.body),
    setupClient: (client) => {
      const c = s.connection(conn++);
      client.setHeadersAndBody(c.headers, Buffer.from(c.body));
    },
    ...(s.perRequest
      ? {
          requests: [
            {
              // Per-request headers; the connection's own headers are kept underneath.
              setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...s.perRequest!(reqNo++) } }),
            },
          ],
        }
      : {}),
  });
  const byStatus: Record<string, number> = {};
  for (const [code, v] of Object.entries(result.statusCodeStats ?? {})) byStatus[code] = v.count;
  return { duration: result.duration, latency: result.latency, byStatus, errors: result.errors, timeouts: result.timeouts };
}
