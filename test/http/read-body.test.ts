// readBodyCapped on the two kinds of Request it meets: the Node adapter's own, over a
// real socket (@hono/node-server reads an announced body straight from the
// IncomingMessage), and one made in process (app.request, the console's playground),
// which may carry a Content-Length that is not its body's.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import { readBodyCapped } from "../../src/http/read-body.ts";

const CAP = 1000;

/** What the handler's read gave, for each request, in arrival order. */
const outcomes: { ok: boolean; code?: string; bytes?: Uint8Array }[] = [];
let nextOutcome: (() => void) | undefined;
const app = new Hono();
app.post("/", async (c) => {
  const r = await readBodyCapped(c.req.raw, CAP);
  outcomes.push(r.ok ? { ok: true, bytes: r.bytes } : { ok: false, code: r.code });
  nextOutcome?.();
  return r.ok ? c.text(`read ${r.bytes.byteLength}`) : c.json({ code: r.code }, r.code === "file_too_large" ? 413 : 400);
});
const outcome = () => new Promise<void>((resolve) => (nextOutcome = resolve));

let server: ServerType;
let port: number;
before(async () => {
  server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((r) => server.once("listening", () => r()));
  port = (server.address() as AddressInfo).port;
});
after(() => {
  (server as Server).closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

/**
 * Sends `head` and then each part of the body on its own (a few ms apart); resolves to
 * what came back, or to what came within 3 s (a server still waiting for a body).
 */
function rawExchange(head: string, parts: Uint8Array[], o: { closeAfterBody?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => {
      answer += d.toString("latin1");
      if (/\r\n\r\n[\s\S]*(read \d+|\})$/.test(answer)) socket.end();
    });
    const gaveUp = setTimeout(() => socket.destroy(), 3000);
    socket.on("close", () => {
      clearTimeout(gaveUp);
      resolve(answer);
    });
    // A reset after the answer arrived (the server closed, then a late part of ours
    // reached it) is not a failure of the exchange: what came back is the result.
    socket.on("error", (e) => (answer ? undefined : reject(e)));
    socket.on("connect", async () => {
      socket.write(head);
      for (const p of parts) {
        await new Promise((r) => setTimeout(r, 5));
        // Once the server has answered, anything more would only race its close.
        if (answer || socket.destroyed) break;
        socket.write(p);
      }
      if (o.closeAfterBody) socket.destroy();
    });
  });
}

const bytesOf = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
const head = (headers: string[]) => ["POST / HTTP/1.1", "Host: localhost", ...headers, "", ""].join("\r\n");

describe("the Node adapter's own Request", { timeout: 10_000 }, () => {
  test("an announced body that arrives in pieces is read whole, byte for byte", async () => {
    const body = bytesOf(900, 7);
    const answer = await rawExchange(head(["Content-Length: 900"]), [body.subarray(0, 1), body.subarray(1, 400), body.subarray(400)]);
    assert.match(answer, /^HTTP\/1\.1 200/);
    assert.match(answer, /read 900$/);
    assert.deepEqual(outcomes.at(-1)!.bytes, body);
  });

  test("exactly the cap is read; one byte over, announced, is refused before any byte is sent", async () => {
    assert.match(await rawExchange(head([`Content-Length: ${CAP}`]), [bytesOf(CAP, 1)]), /read 1000$/);
    // Only the headers go out: the answer comes without the body.
    const answer = await rawExchange(head([`Content-Length: ${CAP + 1}`]), []);
    assert.match(answer, /^HTTP\/1\.1 413/);
  });

  test("a body without a length is refused as soon as it passes the cap", async () => {
    // Each chunk (size line, data, CRLF) goes out in one write, so the cap is passed by
    // the last write and no byte of ours follows the server's answer.
    const chunk = (b: Uint8Array) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from("\r\n")]);
    const answer = await rawExchange(head(["Transfer-Encoding: chunked"]), [chunk(bytesOf(600, 2)), chunk(bytesOf(600, 3))]);
    assert.match(answer, /^HTTP\/1\.1 413/);
  });

  test("a client that announces more than it sends and hangs up: the read fails, as a 400 to nobody", async () => {
    const done = outcome();
    await rawExchange(head(["Content-Length: 900"]), [bytesOf(300, 4)], { closeAfterBody: true });
    await done;
    assert.deepEqual(outcomes.at(-1), { ok: false, code: "invalid_parameter" });
  });
});

describe("a Request made in process", () => {
  const post = (body: Uint8Array, announced: number) =>
    app.request("/", { method: "POST", body: body as Uint8Array<ArrayBuffer>, headers: { "content-length": String(announced) } });

  test("a Content-Length that understates the body: the whole body is read, and the cap still holds", async () => {
    const small = await post(bytesOf(20, 5), 5);
    assert.equal(await small.text(), "read 20");
    const large = await post(bytesOf(CAP + 1, 6), 5);
    assert.equal(large.status, 413);
  });
});
