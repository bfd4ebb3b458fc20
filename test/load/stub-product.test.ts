// The stand-in product (stub-product.ts) as its own process: what the gateway's
// node:http client gets from it, pipelined requests answered in order, a malformed
// request refused, Connection: close honoured, and SIGTERM.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { startChildServer, type ChildServer } from "./child-server.ts";

const PNG = readFileSync(new URL("../fixtures/images/orient-upright.png", import.meta.url));
let stub: ChildServer;
before(async () => {
  stub = await startChildServer("test/load/stub-product.ts", ["5"]);
});
after(() => stub.stop());

function post(agent: Agent, headers: Record<string, string>, body: Buffer) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer; socket: object }>((resolve, reject) => {
    const req = request(`${stub.url}/internal/product`, { method: "POST", agent, headers: { ...headers, "content-length": String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), socket: res.socket }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Sends `raw` on a fresh connection and returns everything read until the server closes it or `until` matches. */
function exchange(raw: string, until?: RegExp): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(stub.url).port), "127.0.0.1");
    let text = "";
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1");
      if (until?.test(text)) {
        socket.destroy();
        resolve({ text, closed: false });
      }
    });
    socket.on("end", () => resolve({ text, closed: true }));
    socket.on("error", reject);
    socket.write(raw);
  });
}

test("the gateway's client gets 200, the PNG, its size headers and its request id, on a kept-alive socket", { timeout: 10_000 }, async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const a = await post(agent, { "x-pd-request-id": "req-a", "content-type": "multipart/form-data; boundary=x" }, Buffer.alloc(5000, 7));
  const b = await post(agent, { "x-pd-request-id": "req-b" }, Buffer.alloc(10));
  agent.destroy();
  assert.equal(a.status, 200);
  assert.deepEqual(a.body, PNG);
  for (const [name, value] of Object.entries({
    "content-type": "image/png",
    "content-length": String(PNG.length),
    "x-width": "64",
    "x-height": "48",
    "x-processing-ms": "5",
    "x-foreground-top": "0",
    "x-foreground-left": "0",
    "x-foreground-width": "64",
    "x-foreground-height": "48",
    "x-pd-request-id": "req-a",
  })) {
    assert.equal(a.headers[name], value, name);
  }
  assert.equal(b.headers["x-pd-request-id"], "req-b");
  assert.equal(a.socket, b.socket, "one kept-alive socket");
  const none = new Agent({ keepAlive: true });
  const c = await post(none, {}, Buffer.alloc(0));
  none.destroy();
  assert.equal(c.headers["x-pd-request-id"], "", "no request id: an empty one, as before");
});

test("pipelined requests (Content-Length, chunked, no body) are answered in order", { timeout: 10_000 }, async () => {
  const raw =
    "POST / HTTP/1.1\r\nhost: stub\r\nx-pd-request-id: one\r\ncontent-length: 3\r\n\r\nabc" +
    "POST / HTTP/1.1\r\nhost: stub\r\nx-pd-request-id: two\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
    "POST / HTTP/1.1\r\nhost: stub\r\nx-pd-request-id: three\r\n\r\n";
  const { text } = await exchange(raw, /x-pd-request-id: three\r\n\r\n[^]{302}/);
  const ids = [...text.matchAll(/x-pd-request-id: (\w+)/g)].map((m) => m[1]);
  assert.deepEqual(ids, ["one", "two", "three"]);
  assert.equal(text.match(/HTTP\/1\.1 200 OK/g)?.length, 3);
});

test("a request is answered only once its whole body has arrived", { timeout: 10_000 }, async () => {
  const socket = connect(Number(new URL(stub.url).port), "127.0.0.1");
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
  socket.write("POST / HTTP/1.1\r\nhost: stub\r\ncontent-length: 4\r\n\r\nab");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(text, "", "nothing before the body's end");
  socket.write("cd");
  for (let i = 0; i < 100 && !text.endsWith(PNG.toString("latin1")); i++) await new Promise((r) => setTimeout(r, 10));
  socket.destroy();
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
});

test("a malformed request: 400 after the answers owed, then the connection closes", { timeout: 10_000 }, async () => {
  const { text, closed } = await exchange("POST / HTTP/1.1\r\nhost: stub\r\nx-pd-request-id: ok\r\ncontent-length: 0\r\n\r\nPOST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n");
  assert.ok(closed);
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*x-pd-request-id: ok\r\n[^]*HTTP\/1\.1 400 Bad Request\r\n/);
});

test("Connection: close is answered, then the connection closes", { timeout: 10_000 }, async () => {
  const { text, closed } = await exchange("POST / HTTP/1.1\r\nhost: stub\r\nconnection: close\r\ncontent-length: 1\r\n\r\nx");
  assert.ok(closed);
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*connection: close\r\n/i);
  assert.ok(text.endsWith(PNG.toString("latin1")));
});

test("SIGTERM: the stub exits, with an idle kept-alive connection open", { timeout: 10_000 }, async () => {
  const own = await startChildServer("test/load/stub-product.ts", ["5"]);
  const agent = new Agent({ keepAlive: true });
  const saved = stub;
  stub = own;
  try {
    assert.equal((await post(agent, {}, Buffer.alloc(1))).status, 200);
  } finally {
    stub = saved;
  }
  await own.stop(); // resolves once the process has exited
  agent.destroy();
});
