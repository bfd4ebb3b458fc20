// Refusals against a bare server: what a flood of bad traffic costs us. For each runtime
// (Node: `node dist/main.js`; Deno: `deno task start`), a bare Hono app answering the same
// envelope (bench/refusals-bare.ts) and ours with the embedded stores (PGlite, the
// in-process limiter; no DATABASE_URL / REDIS_URL) run side by side, and each case is
// driven by autocannon against the bare app and then ours, one right after the other, so
// the ratio holds even when the machine's load moves between cases. Cases:
//   no-key    401: no X-Api-Key, an empty multipart body, a different client address
//             per request (X-Forwarded-For, TRUST_PROXY=1) so the guard never blocks
//   guard     429: no key from one address, which the invalid-key guard blocks after 20
//   unknown-key  429: a well-formed key that does not exist, from one address: each one
//             is looked up by its HMAC (an unknown hash is remembered) before the guard
//   over-cap  413: a live key and a 12,500,000-byte body announced by Content-Length
//   drain     401/429: a bad key and a 12,000,000-byte chunked body, read off before
//             the answer (src/http/unread-body.ts)
// Prints the CPU and its SIMD, the load before and after, then requests/s, p99, the
// server's CPU time per answer (all its threads: a figure less moved by other load) and
// ours ÷ bare per case; ours' answers are counted from its own access log.
//   npm run bench:refusals -- [--seconds 10] [--connections 50] [--warmup 2] [--rounds 1]
//     [--runtimes node,deno] [--cases no-key,guard,unknown-key,over-cap,drain] [--log-level info] [--profile]
// --profile runs ours under the CPU profiler and prints, per case, the main thread's
// time per answer by the package or file nearest each sample (bench/cpu-profile.ts).
// Builds nothing: run `npm run build` first (Node runs dist/). Wrap timing runs in
// `flock /tmp/pd-bench.lock` on a shared machine.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir, uptime } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { accessLogCounts } from "../test/load/run-scenario.ts";
import { mainProfile, monoUs, summarise } from "./cpu-profile.ts";
import { spreadIp, UNKNOWN_KEY } from "../test/load/scenarios.ts";
import { freePort } from "../test/support/free-port.ts";
import { OPERATOR_TOKEN } from "../test/support/harness.ts";
import { adminClient, setUpCustomer } from "../test/support/server-process.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DENO = join(ROOT, "node_modules", ".bin", "deno");

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "1" },
    runtimes: { type: "string", default: "node,deno" },
    cases: { type: "string", default: "no-key,guard,unknown-key,over-cap,drain" },
    "log-level": { type: "string", default: "info" },
    profile: { type: "boolean", default: false },
  },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
const WARMUP_S = Number(args.warmup);
/** Each case this many times over (a row each): on a shared machine, to see how far a ratio moves. */
const ROUNDS = Number(args.rounds);

/** The targets of the two cheap refusals (no body worth reading): ours ÷ bare, and p99. */
const TARGET = { ratio: 0.5, p99Ms: 50 };

// ---- the requests -------------------------------------------------------------------

const BOUNDARY = "pdbench";
const MULTIPART = { "content-type": `multipart/form-data; boundary=${BOUNDARY}` };
/** A multipart body with no parts: the smallest well-formed one. */
const EMPTY_FORM = Buffer.from(`--${BOUNDARY}--\r\n`);
const OVER_CAP_BYTES = 12_500_000;
const CHUNKED_BYTES = 12_000_000;

/**
 * A chunked body, framed here. autocannon announces a Content-Length for any body it is
 * given, and a request with both framings is malformed, so the body rides after the last
 * header line: the request autocannon writes is `…Transfer-Encoding: chunked\r\n\r\n`,
 * the chunks, and the `0\r\n\r\n` that its own header block's end supplies.
 */
function chunkedTail(total: number, chunk = 64 * 1024): string {
  const parts = ["chunked\r\n\r\n"];
  for (let sent = 0; sent < total; sent += chunk) {
    const n = Math.min(chunk, total - sent);
    parts.push(`${n.toString(16)}\r\n${"A".repeat(n)}\r\n`);
  }
  parts.push("0");
  return parts.join("");
}

interface Case {
  name: string;
  what: string;
  /** Answers ours may give ("401 invalid_api_key"); anything else is reported. */
  expected: readonly string[];
  /** Held to TARGET. */
  judged: boolean;
  headers(liveKey: string): Record<string, string>;
  body?: Buffer;
  perRequest?: (n: number) => Record<string, string>;
}

const CASES: Case[] = [
  {
    name: "no-key",
    what: "401, no key, many addresses",
    expected: ["401 invalid_api_key"],
    judged: true,
    headers: () => ({ ...MULTIPART }),
    body: EMPTY_FORM,
    perRequest: (n) => ({ "x-forwarded-for": spreadIp(n) }),
  },
  {
    name: "guard",
    what: "429, no key, one address",
    expected: ["401 invalid_api_key", "429 rate_limited"],
    judged: true,
    headers: () => ({ ...MULTIPART, "x-forwarded-for": "10.78.0.1" }),
    body: EMPTY_FORM,
  },
  {
    name: "unknown-key",
    what: "429, a well-formed unknown key, one address",
    expected: ["401 invalid_api_key", "429 rate_limited"],
    judged: false,
    headers: () => ({ ...MULTIPART, "x-api-key": UNKNOWN_KEY, "x-forwarded-for": "10.81.0.1" }),
    body: EMPTY_FORM,
  },
  {
    name: "over-cap",
    what: `413, live key, ${OVER_CAP_BYTES.toLocaleString("en")} B announced`,
    expected: ["413 file_too_large"],
    judged: false,
    headers: (liveKey) => ({ ...MULTIPART, "x-api-key": liveKey, "x-forwarded-for": "10.79.0.1" }),
    body: Buffer.alloc(OVER_CAP_BYTES, 0x41),
  },
  {
    name: "drain",
    what: `401/429, bad key, ${CHUNKED_BYTES.toLocaleString("en")} B chunked`,
    expected: ["401 invalid_api_key", "429 rate_limited"],
    judged: false,
    // Last, so that the chunked body follows the header block (chunkedTail).
    headers: () => ({ ...MULTIPART, "x-api-key": UNKNOWN_KEY, "x-forwarded-for": "10.80.0.1", "transfer-encoding": chunkedTail(CHUNKED_BYTES) }),
  },
];

// ---- the servers --------------------------------------------------------------------

interface Server {
  url: string;
  pid: number;
  /** Everything it wrote (stdout and stderr go to a file: no pipe for this process to read under load). */
  log: string;
  stop(): Promise<void>;
}

/** Starts a server on `port`, or on the port its output names (`{"port":N}`) when that is a pattern. */
async function start(name: string, file: string, argv: string[], env: Record<string, string>, dir: string, port: number | RegExp): Promise<Server> {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, "w");
  const child: ChildProcess = spawn(file, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(killer);
  };
  for (let waited = 0; waited < 120_000; waited += 100) {
    const at = typeof port === "number" ? ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined)) && port) : port.exec(readFileSync(log, "utf8"))?.[1];
    if (at) return { url: `http://127.0.0.1:${at}`, pid: child.pid!, log, stop };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`${name} did not start:\n${readFileSync(log, "utf8")}`);
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready`);
}

const BARE_PORT = /\{"port":(\d+)\}/;

async function startPair(runtime: string, dir: string): Promise<{ bare: Server; ours: Server }> {
  // A port chosen here: at LOG_LEVEL=warn there is no "listening" line to read it from.
  const port = await freePort();
  const oursEnv = {
    PORT: String(port),
    HOST: "127.0.0.1",
    NODE_ENV: "production",
    // info: one access line per answer, as in service; warn leaves them out (what they cost).
    LOG_LEVEL: args["log-level"],
    // Refusals never reach the model: the stand-in engine keeps the model's start-up
    // (CPU and memory) out of the run.
    INFERENCE_BACKEND: "stub",
    TRUST_PROXY: "1",
    OPERATOR_TOKEN,
    DATA_DIR: join(dir, `${runtime}-data`),
    DATABASE_URL: "",
    REDIS_URL: "",
  };
  const bareFile = join("bench", "refusals-bare.ts");
  const profiled = profileDir(dir, runtime);
  if (runtime === "deno") {
    // `deno task start` runs `deno run -A src/main.ts`; the profiler needs its flag there.
    const ours = profiled ? ["run", "-A", `--cpu-prof-dir=${profiled}`, "src/main.ts"] : ["task", "start"];
    return {
      bare: await start("deno-bare", DENO, ["run", "-A", bareFile], {}, dir, BARE_PORT),
      ours: await start("deno-ours", DENO, ours, oursEnv, dir, port),
    };
  }
  const ours = profiled ? ["--cpu-prof", `--cpu-prof-dir=${profiled}`, "dist/main.js"] : ["dist/main.js"];
  return {
    bare: await start("node-bare", process.execPath, ["--import", "tsx", bareFile], {}, dir, BARE_PORT),
    ours: await start("node-ours", process.execPath, ours, oursEnv, dir, port),
  };
}

// ---- the load -----------------------------------------------------------------------

interface Measured {
  answered: number;
  reqPerSec: number;
  p99: number;
  /** The server's CPU time (all its threads and child processes) per answer, ms. */
  cpuMs: number;
  byStatus: Record<string, number>;
  errors: number;
  timeouts: number;
}

/** user + system CPU seconds of a process and its descendants (`deno task` runs the server as its child), from /proc. */
function treeCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    let total = (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime; USER_HZ is 100
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean)) total += treeCpuSeconds(Number(child));
    }
    return total;
  } catch {
    return 0; // gone meanwhile
  }
}

async function drive(server: Server, c: Case, liveKey: string, seconds: number): Promise<Measured> {
  const url = server.url;
  const cpu0 = treeCpuSeconds(server.pid);
  let n = 0;
  const result = await autocannon({
    url: `${url}/v1.0/removebg`,
    method: "POST",
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
    headers: c.headers(liveKey),
    ...(c.body ? { body: c.body } : {}),
    ...(c.perRequest ? { requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...c.perRequest!(n++) } }) }] } : {}),
  });
  const byStatus: Record<string, number> = {};
  for (const [code, v] of Object.entries(result.statusCodeStats ?? {})) byStatus[code] = v.count;
  const done = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const cpuMs = ((treeCpuSeconds(server.pid) - cpu0) * 1000) / Math.max(1, done);
  return { answered: done, reqPerSec: done / result.duration, p99: result.latency.p99, cpuMs, byStatus, errors: result.errors, timeouts: result.timeouts };
}

/** Waits until a log file stops growing for 300 ms (requests in flight have answered). */
async function quiet(file: string): Promise<string[]> {
  let last = -1;
  for (let i = 0; i < 40; i++) {
    const text = readFileSync(file, "utf8");
    if (text.length === last) return text.split("\n");
    last = text.length;
    await new Promise((r) => setTimeout(r, 300));
  }
  return readFileSync(file, "utf8").split("\n");
}

interface Row {
  runtime: string;
  c: Case;
  bare: Measured;
  ours: Measured;
  answers: Record<string, number>;
  load: string;
}

/** With --profile: where ours (run under the CPU profiler) writes its profiles. */
function profileDir(dir: string, runtime: string): string | undefined {
  return args.profile ? join(dir, `${runtime}-profile`) : undefined;
}

async function runRuntime(runtime: string, cases: Case[], dir: string): Promise<Row[]> {
  const { bare, ours } = await startPair(runtime, dir);
  const rows: Row[] = [];
  const windows: { name: string; at: [number, number]; answers: number }[] = [];
  try {
    await waitReady(ours.url);
    const liveKey = (await setUpCustomer(adminClient(ours.url), { creditKrw: 1000 })).liveKey;
    // Both servers' code paths warm (JIT) before anything is counted.
    for (const s of [bare, ours]) await drive(s, CASES[0]!, liveKey, WARMUP_S);
    for (let round = 0; round < ROUNDS; round++) for (const c of cases) {
      const b = await drive(bare, c, liveKey, SECONDS);
      const from = (await quiet(ours.log)).length - 1;
      const t0 = monoUs();
      const o = await drive(ours, c, liveKey, SECONDS);
      windows.push({ name: c.name, at: [t0, monoUs()], answers: o.answered });
      const answers = accessLogCounts(await quiet(ours.log), from);
      rows.push({ runtime, c, bare: b, ours: o, answers, load: loadavg()[0]!.toFixed(2) });
      console.log(`  ${runtime} ${c.name}: bare ${label(b)}; ours ${label(o)}; load ${loadavg()[0]!.toFixed(2)}`);
    }
  } finally {
    await Promise.all([bare.stop(), ours.stop()]);
  }
  const profiled = profileDir(dir, runtime);
  const profile = profiled && existsSync(profiled) ? mainProfile(profiled) : undefined;
  if (profiled) console.log(profile ? `\n${runtime}, ours under the CPU profiler (its rates are the profiler's too):` : `\n${runtime}: no profile written`);
  if (profile) for (const w of windows) console.log([`${runtime} ${w.name}: ${w.answers.toFixed(0)} answers`, ...summarise(profile, w.at, w.answers)].join("\n  "));
  return rows;
}

// ---- the report ---------------------------------------------------------------------

function cpuLine(): string {
  const info = readFileSync("/proc/cpuinfo", "utf8");
  const model = /^model name\s*:\s*(.*)$/m.exec(info)?.[1] ?? cpus()[0]?.model ?? "unknown CPU";
  const flags = new Set((/^flags\s*:\s*(.*)$/m.exec(info)?.[1] ?? "").split(" "));
  const simd = ["avx2", "avx512f", "avx512_vnni", "avx_vnni"].filter((f) => flags.has(f)).map((f) => f.toUpperCase().replace("_", "-"));
  return `${model}, ${cpus().length} cores, SIMD: ${simd.length ? simd.join(" ") : "no AVX2"}`;
}

const loadLine = () => `load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}, up ${(uptime() / 3600).toFixed(1)} h`;

function label(m: Measured): string {
  const extra = [m.errors ? `${m.errors} errors` : "", m.timeouts ? `${m.timeouts} timeouts` : ""].filter(Boolean).join(", ");
  return `${m.reqPerSec.toFixed(0)}/s, p99 ${m.p99} ms, CPU ${m.cpuMs.toFixed(3)} ms${extra ? ` (${extra})` : ""}`;
}

function table(rows: Row[]): string {
  const out = ["| runtime | case | bare | ours | ours ÷ bare | ours' answers (access log) | target | load |", "|---|---|---|---|---|---|---|---|"];
  for (const r of rows) {
    const ratio = r.ours.reqPerSec / r.bare.reqPerSec;
    const unexpected = Object.keys(r.answers).filter((k) => !r.c.expected.includes(k));
    const answers = Object.entries(r.answers).map(([k, v]) => `${k}: ${v}`).join(", ") || "none";
    const target = r.c.judged ? `≥ ${TARGET.ratio} ×, p99 < ${TARGET.p99Ms} ms: ${ratio >= TARGET.ratio && r.ours.p99 < TARGET.p99Ms ? "met" : "**not met**"}` : "reported";
    out.push(`| ${r.runtime} | ${r.c.name} (${r.c.what}) | ${label(r.bare)} | ${label(r.ours)} | ${ratio.toFixed(2)} | ${answers}${unexpected.length ? ` **unexpected: ${unexpected.join(", ")}**` : ""} | ${target} | ${r.load} |`);
  }
  return out.join("\n");
}

const runtimes = args.runtimes.split(",").filter(Boolean);
const cases = args.cases.split(",").map((name) => {
  const c = CASES.find((x) => x.name === name);
  if (!c) throw new Error(`unknown case ${name}; one of ${CASES.map((x) => x.name).join(", ")}`);
  return c;
});
if (runtimes.includes("node") && !existsSync(join(ROOT, "dist", "main.js"))) throw new Error("no dist/main.js: run `npm run build` first");
const usable = runtimes.filter((r) => r === "node" || (r === "deno" && existsSync(DENO)));
for (const r of runtimes) if (!usable.includes(r)) console.log(`skipped ${r}: ${r === "deno" ? "no Deno binary (the deno devDependency)" : "unknown runtime"}`);

const dir = mkdtempSync(join(tmpdir(), "pd-bench-refusals-"));
console.log(`# Refusals against a bare server, ${new Date().toISOString()}`);
console.log(`${cpuLine()}; Node ${process.version}`);
console.log(`before: ${loadLine()}`);
console.log(`autocannon, ${CONNECTIONS} connections, ${SECONDS} s per case and server (after ${WARMUP_S} s of no-key on each)\n`);
const rows: Row[] = [];
try {
  for (const r of usable) rows.push(...(await runRuntime(r, cases, dir)));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\nafter: ${loadLine()}\n`);
console.log(table(rows));
