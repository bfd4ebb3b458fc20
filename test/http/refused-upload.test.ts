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
before(async () => {
  g = await gatewayHarness({ embedded: true, env: { TRUST_PROXY: "false" } });
  server = await serve((req, env) => g.h.app.fetch(req, env), { port: 0, hostname: "127.0.0.1" });
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
