// Answers given before an upload was read reach Node's own HTTP clients. The real app on
// a real server (serve(), as src/main.ts starts it) is sent 12.5 MB bodies by fetch
// (undici) and node:http from another process: the 413 for a body over the cap
// (announced, or found while receiving a chunked one) and the 401 for a bad key must
// be read as answers, never as EPIPE / ECONNRESET / "other side closed".
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serve, type RunningServer } from "../../src/wiring/serve.ts";
import { gatewayHarness, type GatewayHarness } from "../gateway/helpers.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";

const TRIES = 3;
let g: GatewayHarness;
let server: RunningServer;
let liveKey: string;
/** Every Request the server handed to the app, in arrival order. */
const handed: Request[] = [];
before(async () => {
  g = await gatewayHarness({ embedded: true, env: { TRUST_PROXY: "false" } });
  server = await serve(
    (req, env) => {
      handed.push(req);
      return g.h.app.fetch(req, env);
    },
    { port: 0, hostname: "127.0.0.1" },
  );
  liveKey = (await g.h.customer({ creditKrw: 1000 })).liveKey;
});
after(async () => {
  await server?.close(1000);
  await g?.close();
});

interface Case {
  name: string;
  path: string;
  headers: Record<string, string>;
  body: "form" | "stream" | "node";
}

/** Runs the cases from a client process of their own; each outcome per try. */
function fromOtherProcess(cases: Case[]): Promise<Record<string, string[]>> {
  const script = fileURLToPath(new URL("./refused-upload-client.mjs", import.meta.url));
  const arg = JSON.stringify({ url: `http://127.0.0.1:${server.port}`, tries: TRIES, cases });
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [script, arg], { timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split("\n").at(-1)!)),
    ),
  );
}

const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
const multipartHeader = { "content-type": "multipart/form-data; boundary=x" };

test("413 on the internal product route and the public route, announced or chunked; 401 before the body: all read by fetch and node:http", async () => {
  const key = { "x-api-key": liveKey };
  const cases: [Case, string][] = [
    [{ name: "internal, fetch, announced", path: "/internal/v1/removebg", headers: operator, body: "form" }, "413 file_too_large"],
    [{ name: "internal, fetch, chunked", path: "/internal/v1/removebg", headers: { ...operator, ...multipartHeader }, body: "stream" }, "413 file_too_large"],
    [{ name: "internal, node:http, announced", path: "/internal/v1/removebg", headers: operator, body: "node" }, "413 file_too_large"],
    [{ name: "public, fetch, announced", path: "/v1.0/removebg", headers: key, body: "form" }, "413 file_too_large"],
    [{ name: "public, fetch, chunked", path: "/v1.0/removebg", headers: { ...key, ...multipartHeader }, body: "stream" }, "413 file_too_large"],
    [{ name: "public, node:http, announced", path: "/v1.0/removebg", headers: key, body: "node" }, "413 file_too_large"],
    [{ name: "public, bad key, fetch", path: "/v1.0/removebg", headers: { "x-api-key": `pd_live_${"0".repeat(64)}` }, body: "form" }, "401 invalid_api_key"],
  ];
  const got = await fromOtherProcess(cases.map(([c]) => c));
  const want = Object.fromEntries(cases.map(([c, answer]) => [c.name, Array(TRIES).fill(answer)]));
  assert.deepEqual(got, want);
});

/**
 * What of @hono/node-server's lazy Request was built: its web Request (made by the first
 * touch of body or signal: an undici Request, an AbortSignal and a stream over the
 * socket) and its AbortController. Throws for a Request that is not the adapter's, so a
 * change of the adapter's internals fails here instead of passing unseen.
 */
function madeOf(req: Request): string[] {
  const own = new Map(Object.getOwnPropertySymbols(req).map((s) => [s.description, (req as unknown as Record<symbol, unknown>)[s]]));
  assert.ok(own.has("incomingKey"), "the Request is @hono/node-server's lazy one");
  return ["requestCache", "abortControllerKey"].filter((k) => own.get(k) !== undefined);
}

/** One request from this process over a fresh connection; the Request the app was handed, and the answer. */
async function sent(path: string, init: RequestInit): Promise<{ req: Request; answer: string }> {
  const from = handed.length;
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: "POST", duplex: "half", ...init } as RequestInit);
  const json = (await res.json()) as { errors?: { code: string }[] };
  assert.equal(handed.length, from + 1);
  return { req: handed[from]!, answer: `${res.status} ${json.errors?.[0]?.code}` };
}

function chunked(bytes: number): ReadableStream<Uint8Array> {
  let left = bytes;
  return new ReadableStream({
    pull(c) {
      if (left <= 0) return c.close();
      const n = Math.min(left, 256 * 1024);
      c.enqueue(new Uint8Array(n));
      left -= n;
    },
  });
}

test("refusals before the body is read build none of the adapter's web Request: the rest is read off the connection itself", async () => {
  const form = () => {
    const f = new FormData();
    f.append("size", "preview");
    return f;
  };
  const badKey = { "x-api-key": `pd_live_${"Z".repeat(40)}` };
  const cases: [string, RequestInit, string][] = [
    ["no key, a small form", { body: form() }, "401 invalid_api_key"],
    ["bad key, 12 MB chunked", { headers: { ...badKey, ...multipartHeader }, body: chunked(12_000_000) }, "401 invalid_api_key"],
    ["live key, 12.5 MB announced", { headers: { "x-api-key": liveKey, ...multipartHeader }, body: new Uint8Array(12_500_000) }, "413 file_too_large"],
  ];
  for (const [name, init, answer] of cases) {
    const { req, answer: got } = await sent("/v1.0/removebg", init);
    assert.equal(got, answer, name);
    assert.deepEqual(madeOf(req), [], `${name}: nothing built`);
  }
  // The check sees a build: a chunked upload with a live key is read through the body's stream until the cap.
  const read = await sent("/v1.0/removebg", { headers: { "x-api-key": liveKey, ...multipartHeader }, body: chunked(12_500_000) });
  assert.equal(read.answer, "413 file_too_large");
  assert.ok(madeOf(read.req).includes("requestCache"), "a body read through its stream builds the web Request");
  // The invalid-key guard's 429, once this address is over its limit (last: it blocks the address).
  let last: { req: Request; answer: string } | undefined;
  for (let i = 0; i < 25 && last?.answer !== "429 rate_limited"; i++) last = await sent("/v1.0/removebg", { headers: badKey, body: form() });
  assert.equal(last?.answer, "429 rate_limited");
  assert.deepEqual(madeOf(last!.req), [], "the guard's 429: nothing built");
});
