// Slow clients over real sockets (node:net). A client that trickles its headers, or
// trickles the body of a 12 MB upload, holds a connection and — for the body — 12 MB of
// the gateway's byte budget. serve() bounds both (SLOW_CLIENT_DEFAULTS in
// src/wiring/serve.ts): the connection is dropped, the budget comes back, and other
// uploads go through again. The bounds end with the request: a slow *answer* (long
// processing) is not cut.
//
// The first tests run the real app on a real HTTP server in this process with short
// bounds; the last ones start a real server process (src/main.ts) with the defaults.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { serve, SLOW_CLIENT_DEFAULTS, type RunningServer } from "../../src/wiring/serve.ts";
import { gatewayHarness, productPng, randomIp, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { adminClient, setUpCustomer, startServer, stopAll } from "../support/server-process.ts";
import { findKeyLeaks } from "../support/key-scan.ts";

const logLines: string[] = [];
const issued: string[] = [];
const rows: string[] = [];
let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true, logLines });
});
after(async () => {
  console.log(["\n## Slow clients", "", "| case | bound | dropped after (ms) | answer seen by the slow client |", "|---|---:|---:|---|", ...rows].join("\n"));
  await stopAll();
  await g?.close();
});

const SHORT = { headersTimeoutMs: 800, requestTimeoutMs: 2_000, checkIntervalMs: 100 };

interface Trickle {
  /** Resolves when the server closed the connection: after how long, and what it answered. */
  closed: Promise<{ ms: number; answer: string }>;
  stop(): void;
}

/** Sends `head` at once, then one byte of `drip` every `everyMs` until the server hangs up. */
/**
 * PD_TEST_STALL_MS holds a client up between connecting and its first byte, as a loaded
 * machine may (docs/TESTING.md). Only for a server in its own process: an in-process server
 * stalls with its client, and a stall past the server's header bound is a client it drops.
 */
const STALL_MS = Number(process.env.PD_TEST_STALL_MS ?? 0);

function trickle(port: number, head: string, drip: string, everyMs = 100, stallMs = 0): Trickle {
  const t0 = performance.now();
  const socket = net.connect(port, "127.0.0.1");
  let answer = "";
  let timer: ReturnType<typeof setInterval> | undefined;
  socket.setEncoding("latin1");
  socket.on("data", (d: string) => (answer += d));
  socket.on("error", () => {});
  socket.on("connect", () => setTimeout(() => {
    socket.write(head);
    let i = 0;
    timer = setInterval(() => {
      if (!socket.writable) return;
      socket.write(drip[i++ % drip.length]!);
    }, everyMs);
  }, stallMs));
  const closed = new Promise<{ ms: number; answer: string }>((resolve) =>
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ ms: performance.now() - t0, answer: answer.split("\r\n")[0] || "(nothing)" });
    }),
  );
  return { closed, stop: () => socket.destroy() };
}

function uploadHead(key: string, contentLength: number): string {
  return [
    "POST /v1.0/removebg HTTP/1.1",
    "Host: localhost",
    `X-Api-Key: ${key}`,
    `X-Forwarded-For: ${randomIp()}`,
    "Content-Type: multipart/form-data; boundary=slow",
    `Content-Length: ${contentLength}`,
    "",
    "",
  ].join("\r\n");
}

async function upload(base: string, key: string): Promise<Response> {
  const form = new FormData();
  form.append("image_file", new Blob([TINY_PNG as Uint8Array<ArrayBuffer>]), "a.png");
  form.append("size", "preview");
  return fetch(`${base}/v1.0/removebg`, { method: "POST", body: form, headers: { "x-api-key": key, "x-forwarded-for": randomIp() } });
}

/**
 * Waits for what the server does on its own time (a connection it drops, a share it gives
 * back): however long a loaded machine makes that, so no bound here but the test's own
 * timeout (LIVENESS), which only catches a server that never does it.
 */
async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 20));
}
const LIVENESS = { timeout: 180_000 };

/** A server process's receive budget in use, read from its /metrics (operator token). */
async function budgetInUse(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  const text = await res.text();
  const m = /^pixeldrop_receive_budget_bytes_in_use\{role="gateway"\} (\d+)$/m.exec(text);
  assert.ok(m, "the gauge is served");
  return Number(m[1]);
}

// The server-process tests come first: serve() in this process lets @hono/node-server
// replace the global Response class, after which fetch() answers are no longer
// `instanceof Response` for the helpers in server-process.ts.
test("a real server process: a slow upload holds the budget only while connected; keys stay out of its output", LIVENESS, async () => {
  const server = await startServer({ RECEIVE_BUDGET_BYTES: "12000100", TRUST_PROXY: "true" });
  const port = Number(new URL(server.url).port);
  const c = await setUpCustomer(adminClient(server.url), { creditKrw: 1000 });
  issued.push(c.liveKey, c.testKey);
  const slow = trickle(port, uploadHead(c.liveKey, 12_000_000), `--slow\r\n`, 50, STALL_MS);
  // The slow upload's share is taken once the server has read its head, however long
  // that takes here; an upload sent sooner would be the one holding the budget.
  await until(async () => (await budgetInUse(server.url)) >= 12_000_000);
  const busy = await upload(server.url, c.liveKey);
  assert.equal(busy.status, 503, await busy.clone().text());
  assert.equal(((await busy.json()) as { errors: { code: string }[] }).errors[0]!.code, "gateway_busy");
  slow.stop(); // the client gives up: its share must come back
  await slow.closed;
  await until(async () => (await budgetInUse(server.url)) === 0);
  const ok = await upload(server.url, c.liveKey);
  assert.equal(ok.status, 200, "an upload goes through once the slow client is gone");
  await ok.arrayBuffer();
  await server.kill("SIGTERM");
  assert.deepEqual(findKeyLeaks(server.lines, issued), [], "server output");
});

test(
  "a real server process drops trickled headers at the default bound",
  { ...LIVENESS, skip: !process.env.ABUSE_LONG && "long version only (ABUSE_LONG=1): waits for the default 20 s bound" },
  async () => {
    const server = await startServer({});
    const port = Number(new URL(server.url).port);
    const bound = SLOW_CLIENT_DEFAULTS.headersTimeoutMs;
    const { ms, answer } = await trickle(port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n", "X-Slow: a\r\n", 200).closed;
    rows.push(`| headers trickled, 1 byte / 200 ms (server process, defaults) | ${bound} | ${ms.toFixed(0)} | ${answer} |`);
    assert.ok(ms >= bound - 100, `dropped after ${ms.toFixed(0)} ms, before the bound`);
    await server.kill("SIGTERM");
  },
);

test("a trickled upload body is dropped at the request bound and gives its 12 MB of budget back", LIVENESS, async () => {
  // Room for one 12 MB upload and nothing more.
  const budget = createByteBudget(12_000_100);
  const v = g.variant({ gatewayBudget: budget });
  const server: RunningServer = await serve(v.app.fetch, { port: 0, hostname: "127.0.0.1", ...SHORT });
  const base = `http://127.0.0.1:${server.port}`;
  try {
    const c = await g.h.customer({ creditKrw: 1000 });
    issued.push(c.liveKey, c.testKey);
    const slow = trickle(server.port, uploadHead(c.liveKey, 12_000_000), `--slow\r\n`);
    await until(() => budget.inUse() >= 12_000_000); // the slow upload holds its share
    const busy = await upload(base, c.liveKey);
    assert.equal(busy.status, 503);
    assert.equal(((await busy.json()) as { errors: { code: string }[] }).errors[0]!.code, "gateway_busy");

    const { ms, answer } = await slow.closed;
    rows.push(`| body trickled, 1 byte / 100 ms (in process) | ${SHORT.requestTimeoutMs} | ${ms.toFixed(0)} | ${answer} |`);
    assert.ok(ms >= SHORT.requestTimeoutMs - 100, `dropped after ${ms.toFixed(0)} ms, before the bound`);
    await until(() => budget.inUse() === 0); // the share comes back
    const ok = await upload(base, c.liveKey);
    assert.equal(ok.status, 200, await ok.clone().text());
    await ok.arrayBuffer();
  } finally {
    await server.close(1_000);
  }
});

test("trickled headers are dropped at the header bound", LIVENESS, async () => {
  const server = await serve(g.h.app.fetch, { port: 0, hostname: "127.0.0.1", ...SHORT });
  try {
    const slow = trickle(server.port, "POST /v1.0/removebg HTTP/1.1\r\nHost: localhost\r\n", "X-Slow: a\r\n", 100);
    const { ms, answer } = await slow.closed;
    rows.push(`| headers trickled, 1 byte / 100 ms (in process) | ${SHORT.headersTimeoutMs} | ${ms.toFixed(0)} | ${answer} |`);
    assert.ok(ms >= SHORT.headersTimeoutMs - 100, `dropped after ${ms.toFixed(0)} ms, before the bound`);
  } finally {
    await server.close(1_000);
  }
});

test("the bounds end with the request: processing longer than the request bound still answers", async () => {
  const v = g.variant({
    product: async () => {
      await new Promise((r) => setTimeout(r, SHORT.requestTimeoutMs + 1_000));
      return productPng();
    },
  });
  const server = await serve(v.app.fetch, { port: 0, hostname: "127.0.0.1", ...SHORT });
  try {
    const c = await g.h.customer({ creditKrw: 1000 });
    issued.push(c.liveKey, c.testKey);
    const res = await upload(`http://127.0.0.1:${server.port}`, c.liveKey);
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
  } finally {
    await server.close(1_000);
  }
});

test("no key text in anything logged during the run", () => {
  assert.deepEqual(findKeyLeaks(logLines, issued), []);
});
