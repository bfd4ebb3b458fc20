// Real server processes for the multi-process and crash suites: `node dist/main.js` (what
// `npm start` runs, built by the test command before the tests; no TypeScript loader to
// load in every process) with the stub model, on a port the OS picks (PORT=0; the port
// is read from the "listening" log line). Tests talk to them over real sockets, kill them with
// real signals, and must stop every one they start (stopAll in `after`).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.ts";
import { OPERATOR_TOKEN } from "./harness.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const KEY_PEPPER = "money-suite-pepper-0123456789";

export interface ServerProcess {
  url: string;
  pid: number;
  /** stdout and stderr lines so far, for assertion messages. */
  lines: string[];
  /** Sends `signal` and resolves when the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ServerProcess>();

export interface StartOptions {
  /** Wait for /readyz (models warm, stores reachable); default true. */
  waitReady?: boolean;
  timeoutMs?: number;
  /** The program that starts the service; default `node dist/main.js`. */
  command?: { file: string; args: string[] };
}

/**
 * A server as a developer runs one: NODE_ENV=development on loopback (the developer
 * mailbox is served) with the payment sandbox turned on. Its mailed links name its own
 * address (PUBLIC_URL), so its port is chosen before it starts.
 */
export async function startDevelopmentServer(env: Record<string, string>, o: StartOptions = {}): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({ NODE_ENV: "development", PAYMENT_PROVIDER: "sandbox", PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, ...env }, o);
}

/**
 * Starts one server. `env` adds to (and wins over) a base of PORT=0, HOST=127.0.0.1,
 * INFERENCE_BACKEND=stub, the shared OPERATOR_TOKEN and KEY_PEPPER. The parent's store
 * variables are not passed on unless given in `env`. LOG_LEVEL is info or debug.
 */
export async function startServer(env: Record<string, string>, o: StartOptions = {}): Promise<ServerProcess> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // The test runner's own markers and the suite's store URLs stay out.
    if (v === undefined || k.startsWith("NODE_TEST") || k === "DATABASE_URL" || k === "REDIS_URL") continue;
    base[k] = v;
  }
  const command = o.command ?? { file: process.execPath, args: ["dist/main.js"] };
  const child: ChildProcess = spawn(command.file, command.args, {
    cwd: REPO_ROOT,
    // A group of its own, signalled whole (kill below): a command that runs the server as
    // a child of its own (`deno task start`) must not leave it running, holding this
    // process's pipes open, when it is killed before it could pass the signal on.
    detached: true,
    env: {
      ...base,
      PORT: "0",
      HOST: "127.0.0.1",
      INFERENCE_BACKEND: "stub",
      OPERATOR_TOKEN,
      KEY_PEPPER,
      ...env,
      // The port is read from the info-level "listening" line.
      LOG_LEVEL: env.LOG_LEVEL === "debug" ? "debug" : "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let onLine: ((line: string) => void) | undefined;
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
        onLine?.(line);
      }
    });
  }

  const server: ServerProcess = {
    url: "",
    pid: child.pid!,
    lines,
    exited,
    async kill(signal = "SIGTERM") {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group is gone already (every process in it has exited).
      }
      await exited;
      running.delete(server);
    },
  };
  running.add(server);

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not listen within ${timeoutMs} ms:\n${lines.join("\n")}`)), timeoutMs);
    const check = (line: string) => {
      const m = /"msg":"listening","port":(\d+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    lines.forEach(check);
    onLine = check;
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${lines.join("\n")}`));
    });
  }).catch(async (err: unknown) => {
    await server.kill("SIGKILL");
    throw err;
  });
  server.url = `http://127.0.0.1:${port}`;
  if (o.waitReady !== false) await waitReady(server, timeoutMs);
  return server;
}

/** Polls /readyz until it answers 200. */
export async function waitReady(server: ServerProcess, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    const res = await fetch(`${server.url}/readyz`).catch((err: unknown) => err as Error);
    if (res instanceof Response) {
      last = await res.text();
      if (res.status === 200) return;
    } else last = res.message;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready within ${timeoutMs} ms: ${last}\n${server.lines.join("\n")}`);
}

/** SIGKILLs every server this process started and has not stopped yet. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((s) => s.kill("SIGKILL")));
}

/** The operator API of a running server (or of anything with the same routes). */
export function adminClient(baseUrl: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
}

export type Admin = ReturnType<typeof adminClient>;

/** A verified org with credit, one app with the product enabled, and its live and test keys. */
export async function setUpCustomer(admin: Admin, opts: { creditKrw?: number } = {}) {
  const must = async (r: Promise<{ status: number; json: Record<string, any> }>, want: number) => {
    const got = await r;
    if (got.status !== want) throw new Error(`admin call: ${got.status} ${JSON.stringify(got.json)}`);
    return got.json;
  };
  const org = await must(admin("POST", "/orgs", { email: `m${crypto.randomUUID()}@example.com` }), 201);
  const orgId = org.orgId as string;
  if (opts.creditKrw) await must(admin("POST", `/orgs/${orgId}/credit`, { amountKrw: opts.creditKrw }), 200);
  const app = await must(admin("POST", `/orgs/${orgId}/apps`, { name: "money suite", productEnabled: true }), 201);
  const appId = app.appId as string;
  const live = await must(admin("POST", `/apps/${appId}/keys`, { kind: "live" }), 201);
  const test = await must(admin("POST", `/apps/${appId}/keys`, { kind: "test" }), 201);
  return { orgId, appId, liveKey: live.key as string, testKey: test.key as string };
}

/** Sends through fetch to `baseUrl`, in the shape sendRemovebg wants. */
export const over = (baseUrl: string) => (path: string, init: RequestInit) => fetch(`${baseUrl}${path}`, init);
