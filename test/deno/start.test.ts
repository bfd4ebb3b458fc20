// The service under Deno, as a user starts it: `deno task start` (the Deno binary from the
// `deno` devDependency) with the stub model on a port the OS picks. The test reads the port
// from the "listening" log line, waits for /readyz, makes a paid removebg call with a live
// key created through the operator API, and stops the process with SIGTERM, which must end
// in a graceful shutdown (exit 0 after "stopped").
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fixture, OPERATOR_TOKEN } from "../support/harness.ts";
import { sendRemovebg } from "../support/removebg-request.ts";
import { adminClient, KEY_PEPPER, over, setUpCustomer } from "../support/server-process.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DENO = join(REPO_ROOT, "node_modules", ".bin", "deno");
const noDeno = !existsSync(DENO) && "no Deno binary: the deno devDependency is not installed";

interface DenoServer {
  url: string;
  lines: string[];
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<ChildProcess>();
const dataDirs: string[] = [];
after(() => {
  // Only what this file started, and only if a test left it running.
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function startDeno(env: Record<string, string>, timeoutMs = 120_000): Promise<DenoServer> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("NODE_TEST") || k === "DATABASE_URL" || k === "REDIS_URL") continue;
    base[k] = v;
  }
  const dataDir = mkdtempSync(join(tmpdir(), "pd-deno-start-"));
  dataDirs.push(dataDir);
  const child = spawn(DENO, ["task", "start"], {
    cwd: REPO_ROOT,
    env: {
      ...base,
      PORT: "0",
      HOST: "127.0.0.1",
      INFERENCE_BACKEND: "stub",
      OPERATOR_TOKEN,
      KEY_PEPPER,
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      NO_COLOR: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`deno task start did not listen within ${timeoutMs} ms:\n${lines.join("\n")}`)), timeoutMs);
    for (const stream of [child.stdout!, child.stderr!]) {
      let buf = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          lines.push(line);
          const m = /"msg":"listening","port":(\d+)/.exec(line);
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        }
      });
    }
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`deno task start exited (${code ?? signal}) before listening:\n${lines.join("\n")}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    const res = await fetch(`${url}/readyz`).catch((err: unknown) => err as Error);
    if (res instanceof Response) {
      last = `${res.status} ${await res.text()}`;
      if (res.status === 200) break;
    } else last = res.message;
    if (Date.now() > until) throw new Error(`not ready within ${timeoutMs} ms: ${last}\n${lines.join("\n")}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, lines, child, exited };
}

async function paidCallThenSigterm(server: DenoServer) {
  const admin = adminClient(server.url);
  const customer = await setUpCustomer(admin, { creditKrw: 1000 });
  const res = await sendRemovebg(over(server.url), customer.liveKey, {
    image_file: fixture("images/png-rgb.png"),
    size: "preview",
  });
  const body = new Uint8Array(await res.arrayBuffer());
  assert.equal(res.status, 200, new TextDecoder().decode(body));
  assert.equal(res.headers.get("content-type"), "image/png");
  assert.deepEqual([...body.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "a PNG signature");
  assert.equal(res.headers.get("x-pd-charged-krw"), "22");
  assert.equal(res.headers.get("x-pd-balance-krw"), "978");
  assert.match(res.headers.get("x-pd-request-id") ?? "", /^req_/);

  // The operator API sees the same money: the balance went down by the charge.
  const org = await admin("GET", `/orgs/${customer.orgId}`);
  assert.equal(org.status, 200, JSON.stringify(org.json));
  assert.equal(org.json.balanceKrw, 978, JSON.stringify(org.json));

  server.child.kill("SIGTERM");
  const { code, signal } = await server.exited;
  assert.equal(code, 0, `exit ${code ?? signal}:\n${server.lines.join("\n")}`);
  assert.ok(server.lines.some((l) => l.includes('"msg":"shutting down","signal":"SIGTERM"')), server.lines.join("\n"));
  assert.ok(server.lines.some((l) => l.includes('"msg":"stopped"')), server.lines.join("\n"));
}

test("deno task start, embedded stores: ready, a paid removebg call, graceful SIGTERM", { skip: noDeno, timeout: 240_000 }, async () => {
  const server = await startDeno({});
  assert.ok(server.lines.some((l) => l.includes('"database":"pglite"')), server.lines.join("\n"));
  await paidCallThenSigterm(server);
});

const stores = process.env.DATABASE_URL && process.env.REDIS_URL;
test(
  "deno task start on PostgreSQL and Redis (postgres.js and ioredis under Deno)",
  { skip: noDeno || (!stores && "DATABASE_URL and REDIS_URL not set"), timeout: 240_000 },
  async () => {
    const server = await startDeno({ DATABASE_URL: process.env.DATABASE_URL!, REDIS_URL: process.env.REDIS_URL! });
    assert.ok(server.lines.some((l) => l.includes('"limiter":"redis"')), server.lines.join("\n"));
    await paidCallThenSigterm(server);
  },
);
