// The body read straight from Node's IncomingMessage (src/http/read-incoming.ts), over a
// real socket through @hono/node-server as the service runs: the same bytes and answers
// as the web-stream path, for a whole body, one past the cap, and a client that leaves
// in the middle of its body.
import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";
import { Hono } from "hono";
import { readBodyCapped } from "../../src/http/read-body.ts";
import { unreadIncoming } from "../../src/http/read-incoming.ts";
import { serve } from "../../src/wiring/serve.ts";

type Outcome = Awaited<ReturnType<typeof readBodyCapped>>;

/** A server whose one route reads the body with `cap` and reports what it got (and which path it took). */
async function withServer(cap: number, run: (port: number, outcomes: Outcome[]) => Promise<void>) {
  const outcomes: Outcome[] = [];
  const app = new Hono();
  app.post("/", async (c) => {
    if (!unreadIncoming(c.env)) throw new Error("expected the Node IncomingMessage path");
    const r = await readBodyCapped(c.req.raw, cap, c.env);
    outcomes.push(r);
    return c.json(r.ok ? { bytes: r.bytes.length, first: r.bytes[0], last: r.bytes[r.bytes.length - 1] } : { code: r.code }, r.ok ? 200 : 400);
  });
  const server = await serve(app.fetch, { port: 0, hostname: "127.0.0.1" });
  try {
    await run(server.port, outcomes);
  } finally {
    await server.close(1000);
  }
}

function post(port: number, chunks: Buffer[], headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/", headers }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

test("a chunked body arrives whole, in order, in a buffer of its own", async () => {
  await withServer(1_000_000, async (port, outcomes) => {
    const chunks = Array.from({ length: 20 }, (_, i) => Buffer.alloc(10_000, i + 1));
    const res = await post(port, chunks, { "transfer-encoding": "chunked" });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { bytes: 200_000, first: 1, last: 20 });
    const got = outcomes[0]!;
    assert.ok(got.ok);
    // Not a view of a pooled Buffer: the job and the idempotency hash keep these bytes.
    assert.equal(got.bytes.byteOffset, 0);
    assert.equal(got.bytes.buffer.byteLength, 200_000);
  });
});

test("an empty body is an empty body", async () => {
  await withServer(10, async (port) => {
    const res = await post(port, [], { "content-length": "0" });
    assert.deepEqual(JSON.parse(res.body), { bytes: 0 });
  });
});

test("a body one byte past the cap is refused with the cap's answer", async () => {
  await withServer(1000, async (port, outcomes) => {
    const res = await post(port, [Buffer.alloc(600), Buffer.alloc(401)], { "transfer-encoding": "chunked" }).catch(() => undefined);
    // Node may reset the upload after answering; either way the server's answer is the cap's.
    if (res) assert.deepEqual(JSON.parse(res.body), { code: "file_too_large" });
    assert.equal(outcomes[0]!.ok, false);
    assert.equal((outcomes[0] as { code: string }).code, "file_too_large");
  });
  await withServer(1000, async (port) => {
    const res = await post(port, [Buffer.alloc(1000)], { "transfer-encoding": "chunked" });
    assert.deepEqual(JSON.parse(res.body), { bytes: 1000, first: 0, last: 0 });
  });
});

test("a client that leaves in the middle of its body gets invalid_parameter, not a hang", async () => {
  await withServer(1_000_000, async (port, outcomes) => {
    const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/", headers: { "content-length": "5000" } });
    req.on("error", () => {});
    req.write(Buffer.alloc(1000));
    await new Promise((r) => setTimeout(r, 100));
    req.destroy();
    for (let i = 0; i < 50 && outcomes.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(outcomes.length, 1, "the read ended");
    assert.equal(outcomes[0]!.ok, false);
    assert.equal((outcomes[0] as { code: string }).code, "invalid_parameter");
  });
});

test("without a Node request underneath (app.request, Deno) the web-stream path reads the body", async () => {
  assert.equal(unreadIncoming(undefined), undefined);
  assert.equal(unreadIncoming({ remoteAddr: { hostname: "x" } }), undefined);
  const r = await readBodyCapped(new Request("http://x/", { method: "POST", body: "hello" }), 100, undefined);
  assert.ok(r.ok);
  assert.equal(new TextDecoder().decode(r.bytes), "hello");
});
