// The service under Deno, as a user starts it: `deno task start` (the Deno binary from the
// `deno` devDependency) with the stub model on a port the OS picks. The test reads the port
// from the "listening" log line, waits for /readyz, makes a paid removebg call with a live
// key created through the operator API, and stops the process with SIGTERM, which must end
// in a graceful shutdown (exit 0 after "stopped").
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fixture } from "../support/harness.ts";
import { sendRemovebg } from "../support/removebg-request.ts";
import { adminClient, over, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DENO = join(REPO_ROOT, "node_modules", ".bin", "deno");
const noDeno = !existsSync(DENO) && "no Deno binary: the deno devDependency is not installed";

const dataDirs: string[] = [];
after(async () => {
  // Only what this file started, and only if a test left it running.
  await stopAll();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** `deno task start` with the same base settings as the Node servers of the other suites. */
function startDeno(env: Record<string, string>): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "pd-deno-start-"));
  dataDirs.push(dataDir);
  return startServer({ DATA_DIR: dataDir, NO_COLOR: "1", ...env }, { command: { file: DENO, args: ["task", "start"] }, timeoutMs: 120_000 });
}

async function paidCallThenSigterm(server: ServerProcess) {
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

  await server.kill("SIGTERM");
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
  "deno task start on PostgreSQL and Redis (node-postgres and ioredis under Deno)",
  { skip: noDeno || (!stores && "DATABASE_URL and REDIS_URL not set"), timeout: 240_000 },
  async () => {
    const server = await startDeno({ DATABASE_URL: process.env.DATABASE_URL!, REDIS_URL: process.env.REDIS_URL! });
    assert.ok(server.lines.some((l) => l.includes('"limiter":"redis"')), server.lines.join("\n"));
    await paidCallThenSigterm(server);
  },
);
