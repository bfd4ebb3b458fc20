// The rest of a refused body, on a real connection (serve(), as src/main.ts starts it:
// @hono/node-server under Node, Deno.serve under Deno) and in process. An app that answers
// 401 without reading, behind readUnreadBody with small bounds, is sent bodies over raw
// sockets: a body that ends within the bounds is read off before the answer and the
// connection stays open for the next request; one past the byte bound, or a client that
// goes quiet, gets the answer with `Connection: close`; a body announced past the bound
// is not read at all. In process (app.request) an unread body is cancelled, not read.
// Deno.serve decides two things itself: it answers a body of more than a few kB with
// `Connection: close` even when the body was read whole, and after a `Connection: close`
// with the body left unread it keeps the connection until the client ends it (it stops
// reading; the client has its answer). Those expectations are Node's only.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { Hono } from "hono";
import { readUnreadBody } from "../../src/http/unread-body.ts";
import { serve, type RunningServer } from "../../src/wiring/serve.ts";

const BOUNDS = { maxBytes: 100_000, idleMs: 400 };
const app = new Hono();
app.use("*", readUnreadBody(BOUNDS));
app.post("/", (c) => c.json({ refused: true }, 401));

let server: RunningServer;
before(async () => {
  server = await serve(app.fetch, { port: 0, hostname: "127.0.0.1" });
});
after(() => server.close(1000));

const onDeno = "Deno" in globalThis;

interface Answer {
  status: number;
  close: boolean;
  /** For a `Connection: close` answer: the server ended the connection within a second. */
  ended?: boolean;
  /** ms from the first byte sent to the answer's arrival. */
  ms: number;
}

/**
 * One connection: for each request, its head and then its body parts `gapMs` apart (a
 * part is not sent once the answer is in); resolves to each answer. After an answer
 * that says `Connection: close`, the connection's end is awaited for up to a second.
 */
function exchange(requests: { head: string; parts: Uint8Array[]; gapMs?: number }[]): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1");
    const answers: Answer[] = [];
    let buf = "";
    let t0 = 0;
    let waiting: (() => void) | undefined;
    socket.on("data", (d: Buffer) => {
      buf += d.toString("latin1");
      // Each answer is small, with a Content-Length: its end is known.
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.slice(0, end);
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        answers.push({ status: Number(head.slice(9, 12)), close: /\r\nconnection: *close/i.test(head), ms: performance.now() - t0 });
        waiting?.();
      }
    });
    socket.on("error", (e) => (answers.length ? undefined : reject(e)));
    socket.on("connect", async () => {
      for (const r of requests) {
        const answered = new Promise<void>((done) => (waiting = done));
        const count = answers.length;
        t0 = performance.now();
        socket.write(r.head);
        for (const p of r.parts) {
          await new Promise((w) => setTimeout(w, r.gapMs ?? 5));
          if (answers.length > count || socket.destroyed) break;
          socket.write(p);
        }
        await answered;
        if (answers.at(-1)!.close) break;
      }
      const last = answers.at(-1);
      if (last?.close) {
        last.ended = await new Promise<boolean>((r) => {
          if (socket.readableEnded || socket.destroyed) return r(true);
          const waited = setTimeout(() => r(false), 1000);
          socket.once("close", () => (clearTimeout(waited), r(true)));
        });
      }
      socket.destroy();
      resolve(answers);
    });
  });
}

const head = (headers: string[]) => ["POST / HTTP/1.1", "Host: localhost", ...headers, "", ""].join("\r\n");
const chunk = (n: number) => Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), Buffer.alloc(n, 0x41), Buffer.from("\r\n")]);
const pieces = (count: number, size: number) => Array.from({ length: count }, () => new Uint8Array(size));

test("a body that ends within the bounds is read off before the answer, and the connection serves the next request", async () => {
  const announced = { head: head(["Content-Length: 60000"]), parts: pieces(6, 10_000), gapMs: 50 };
  const chunked = { head: head(["Transfer-Encoding: chunked"]), parts: [chunk(30_000), chunk(30_000), Buffer.from("0\r\n\r\n")], gapMs: 50 };
  const small = { head: head(["Content-Length: 5"]) + "hello", parts: [] };
  if (onDeno) {
    // Small bodies keep the connection; a large one is answered (Deno closes after it).
    assert.deepEqual((await exchange([small, small])).map((a) => [a.status, a.close]), [[401, false], [401, false]]);
    for (const r of [announced, chunked]) assert.equal((await exchange([r]))[0]!.status, 401);
    return;
  }
  const answers = await exchange([announced, chunked, small]);
  assert.deepEqual(answers.map((a) => [a.status, a.close]), [[401, false], [401, false], [401, false]]);
  // The answer waited for the last part (six parts 50 ms apart), not for the idle bound.
  assert.ok(answers[0]!.ms >= 250, `answered after ${answers[0]!.ms} ms, before the body ended`);
});

test("past the byte bound: the answer comes with Connection: close (on Node the connection ends)", async () => {
  const endless = { head: head(["Transfer-Encoding: chunked"]), parts: Array.from({ length: 40 }, () => chunk(16_000)), gapMs: 2 };
  const [a] = await exchange([endless]);
  assert.deepEqual([a!.status, a!.close], [401, true]);
  if (!onDeno) assert.equal(a!.ended, true);
});

test("a body announced past the byte bound is answered at once, with Connection: close (on Node the connection ends)", async () => {
  const [a] = await exchange([{ head: head([`Content-Length: ${BOUNDS.maxBytes + 1}`]), parts: [] }]);
  assert.deepEqual([a!.status, a!.close], [401, true]);
  if (!onDeno) assert.equal(a!.ended, true);
  assert.ok(a!.ms < BOUNDS.idleMs, `answered after ${a!.ms} ms`);
});

test("a client that goes quiet mid-body gets the answer after the idle bound, with Connection: close", async () => {
  const [a] = await exchange([{ head: head(["Content-Length: 50000"]), parts: [new Uint8Array(10_000)] }]);
  assert.deepEqual([a!.status, a!.close], [401, true]);
  assert.ok(a!.ms >= BOUNDS.idleMs - 50, `answered after ${a!.ms} ms, before the idle bound`);
});

test("in process (app.request) an unread body is cancelled, not read", async () => {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled += 64 * 1024;
      c.enqueue(new Uint8Array(64 * 1024));
    },
  });
  const res = await app.request("/", { method: "POST", body, duplex: "half" } as RequestInit);
  assert.equal(res.status, 401);
  assert.ok(pulled <= 2 * 64 * 1024, `pulled ${pulled} bytes`);
});
