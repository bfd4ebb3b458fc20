// The open loop (open-loop.ts) on its raw sockets against small node:http servers in
// this process: every request sent once with its slot's and its own headers and body,
// answers of every framing counted, a server closing or dropping connections, a hung
// request timed out and its slot given a fresh socket, the warm-up left out. Light
// loads (at most a few hundred requests); nothing here is about speed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { runOpenLoop, type OpenLoopOptions } from "./open-loop.ts";

interface Seen {
  n: number;
  key: string;
  body: string;
  contentLength: string | undefined;
  socket: number;
}

async function withServer(handle: (req: IncomingMessage, res: ServerResponse, n: number) => void, run: (url: string) => Promise<void>): Promise<void> {
  const server = createServer((req, res) => {
    const n = Number(req.headers["x-n"]);
    handle(req, res, n);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1.0/removebg?q=1`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

const base = (url: string, over: Partial<OpenLoopOptions> = {}): OpenLoopOptions => ({
  url,
  rate: 200,
  seconds: 0.5,
  connections: 4,
  connection: (i) => ({ headers: { "x-api-key": `key-${i}`, "content-type": "application/octet-stream" }, body: new TextEncoder().encode(`body of ${i}\r\n`) }),
  perRequest: (n) => ({ "x-n": String(n) }),
  timeoutMs: 5_000,
  ...over,
});

test("every request once, with its slot's headers and body and its own fields; answers of every framing counted", { timeout: 30_000 }, async () => {
  const seen: Seen[] = [];
  const sockets = new Map<object, number>();
  await withServer(
    async (req, res, n) => {
      const body = await readBody(req);
      if (!sockets.has(req.socket)) sockets.set(req.socket, sockets.size);
      seen.push({ n, key: String(req.headers["x-api-key"]), body, contentLength: req.headers["content-length"], socket: sockets.get(req.socket)! });
      // Content-Length, chunked (several writes), a 204 and an error status in turn.
      if (n % 4 === 0) res.writeHead(200, { "content-length": "2" }).end("ok");
      else if (n % 4 === 1) {
        res.writeHead(200);
        res.write("part one, ");
        setImmediate(() => res.end("part two"));
      } else if (n % 4 === 2) res.writeHead(204).end();
      else res.writeHead(429, { "content-type": "application/json" }).end('{"errors":[]}');
    },
    async (url) => {
      const r = await runOpenLoop(base(url));
      assert.equal(r.sent, 100);
      assert.deepEqual(r.byStatus, { 200: 50, 204: 25, 429: 25 });
      assert.equal(r.errors, 0);
      assert.equal(r.timeouts, 0);
      assert.ok(r.latency.p50 > 0 && r.latency.p99 >= r.latency.p50);
    },
  );
  assert.deepEqual(
    seen.map((s) => s.n).sort((a, b) => a - b),
    Array.from({ length: 100 }, (_, i) => i),
  );
  for (const s of seen) {
    const slot = Number(s.key.slice(4));
    assert.equal(s.body, `body of ${slot}\r\n`);
    assert.equal(s.contentLength, String(s.body.length));
  }
  // Requests go round the slots in turn, each on its own kept-alive socket.
  assert.equal(new Set(seen.map((s) => s.socket)).size, 4);
  for (const s of seen) assert.equal(s.socket, seen.find((t) => t.key === s.key)!.socket, "a slot keeps its socket");
});

test("a server that closes after some answers (Connection: close, or an answer that runs to the close): every request still answered", { timeout: 30_000 }, async () => {
  await withServer(
    async (req, res, n) => {
      await readBody(req);
      // Answers slower than the schedule: requests queue, and each goes out the moment
      // its slot's answer is read, before the server's close has arrived.
      await new Promise((r) => setTimeout(r, 15));
      if (n % 3 === 0) res.writeHead(200, { connection: "close", "content-length": "1" }).end("x");
      else if (n % 3 === 1) {
        // No length, no chunking: the body ends when the server closes the connection.
        res.socket!.end("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end");
      } else res.writeHead(200, { "content-length": "1" }).end("y");
    },
    async (url) => {
      const r = await runOpenLoop(base(url, { seconds: 0.3, connections: 2 }));
      assert.deepEqual(r.byStatus, { 200: 60 });
      assert.equal(r.errors, 0);
    },
  );
});

test("a server that drops the connection or answers garbage: an error, and the slot's next request goes on a fresh socket", { timeout: 30_000 }, async () => {
  await withServer(
    async (req, res, n) => {
      await readBody(req);
      if (n === 5) req.socket.destroy();
      else if (n === 9) req.socket.write("HTTP/1.1 abc\r\n\r\n");
      else res.writeHead(200, { "content-length": "0" }).end();
    },
    async (url) => {
      const r = await runOpenLoop(base(url, { seconds: 0.3, connections: 1 }));
      assert.deepEqual(r.byStatus, { 200: 58 });
      assert.equal(r.errors, 2);
      assert.equal(r.timeouts, 0);
    },
  );
});

test("a request left unanswered times out; the slot carries on with a fresh socket", { timeout: 30_000 }, async () => {
  await withServer(
    async (req, res, n) => {
      await readBody(req);
      if (n === 3) return; // never answered
      res.writeHead(200, { "content-length": "0" }).end();
    },
    async (url) => {
      const r = await runOpenLoop(base(url, { rate: 50, seconds: 1, connections: 2, timeoutMs: 300 }));
      assert.deepEqual(r.byStatus, { 200: 49 });
      assert.equal(r.timeouts, 1);
      assert.equal(r.errors, 1, "a timeout is an error too");
    },
  );
});

test("latency counts from the scheduled time: requests waiting (FIFO) behind a slow answer show the wait", { timeout: 30_000 }, async () => {
  const order: number[] = [];
  await withServer(
    async (req, res, n) => {
      await readBody(req);
      order.push(n);
      setTimeout(() => res.writeHead(200, { "content-length": "0" }).end(), n === 0 ? 400 : 0);
    },
    async (url) => {
      // One socket at 100/s: requests 1 to about 39 fall due while request 0 is out.
      const r = await runOpenLoop(base(url, { rate: 100, seconds: 0.5, connections: 1 }));
      assert.deepEqual(r.byStatus, { 200: 50 });
      assert.ok(r.latency.p99 >= 390, `p99 ${r.latency.p99}`);
      // Counted from the actual send, the median would be about a millisecond.
      assert.ok(r.latency.p50 >= 100, `p50 ${r.latency.p50} includes the wait`);
      assert.ok(r.sendLagP99 >= 300, `send lag ${r.sendLagP99}`);
    },
  );
  assert.deepEqual(order, Array.from({ length: 50 }, (_, i) => i), "sent in schedule order");
});

test("the warm-up is sent but left out of the figures; per-second p99 shows it", { timeout: 30_000 }, async () => {
  let requests = 0;
  await withServer(
    async (req, res) => {
      await readBody(req);
      requests++;
      res.writeHead(200, { "content-length": "0" }).end();
    },
    async (url) => {
      const r = await runOpenLoop(base(url, { rate: 100, seconds: 0.5, warmupSeconds: 1 }));
      assert.equal(r.sent, 50);
      assert.equal(r.duration, 0.5);
      assert.deepEqual(r.byStatus, { 200: 50 });
      assert.equal(r.warmupSeconds, 1);
      assert.equal(r.p99BySecond.length, 2);
      assert.ok(r.p99BySecond.every((v) => v > 0));
    },
  );
  assert.equal(requests, 150);
});

test("a server that is not there: every request an error, none answered", { timeout: 30_000 }, async () => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  const r = await runOpenLoop(base(`http://127.0.0.1:${port}/`, { rate: 100, seconds: 0.2 }));
  assert.deepEqual(r.byStatus, {});
  assert.equal(r.errors, 20);
});
