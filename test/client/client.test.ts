// The client against a real service process: results and their headers, final errors
// that are never sent again (counted by the front server), error typing, the package
// entry, and the portability rule (no Node built-ins in src/client).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createClient, PixeldropError, PixeldropNetworkError, type RemoveSize } from "../../src/client/index.ts";
import { parseRetryAfter } from "../../src/client/wire.ts";
import { recordingSleep, REQUEST_ID, startService, TINY_PNG, type Service } from "./setup.ts";

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc?.close();
});

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

async function balance(): Promise<number> {
  const org = await svc.admin("GET", `/orgs/${svc.customer.orgId}`);
  assert.equal(org.status, 200);
  return org.json.balanceKrw as number;
}

test("a live key gets the cut-out with its charge, balance and image headers", async () => {
  const before = await balance();
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.url });
  const r = await client.removeBackground(TINY_PNG, { size: "preview" });
  assert.deepEqual([...r.bytes.subarray(0, 8)], PNG_SIGNATURE);
  assert.match(r.contentType, /^image\/png/);
  assert.match(r.requestId, REQUEST_ID);
  assert.equal(r.chargedKrw, 22);
  assert.equal(r.balanceKrw, before - 22);
  assert.equal(await balance(), before - 22);
  assert.deepEqual([r.width, r.height], [64, 48]);
  assert.ok(Number.isInteger(r.processingMs) && r.processingMs >= 0, `processingMs ${r.processingMs}`);
  assert.equal(r.testSize, undefined);
  assert.equal(r.testRemaining, undefined);
});

test("a test key gets the test headers and no charge; Uint8Array, ArrayBuffer, Blob and File are all accepted", async () => {
  const client = createClient({ apiKey: svc.customer.testKey, baseUrl: `${svc.url}/` });
  const buffer = TINY_PNG.slice().buffer as ArrayBuffer;
  const inputs = [TINY_PNG, buffer, new Blob([buffer], { type: "image/png" }), new File([buffer], "tiny.png", { type: "image/png" })];
  const remaining: number[] = [];
  for (const input of inputs) {
    const r = await client.removeBackground(input);
    assert.deepEqual([...r.bytes.subarray(0, 8)], PNG_SIGNATURE);
    assert.equal(r.testSize, "preview");
    assert.equal(r.chargedKrw, undefined);
    assert.equal(r.balanceKrw, undefined);
    assert.equal(typeof r.testRemaining, "number");
    remaining.push(r.testRemaining!);
  }
  // Each call used one of the month's free calls.
  assert.deepEqual(remaining, [0, 1, 2, 3].map((i) => remaining[0]! - i));
});

test("a 400 from the service is final: one request, a typed error with code and request ID, key not shown", async () => {
  const { waits, sleep } = recordingSleep();
  const key = svc.customer.liveKey;
  const client = createClient({ apiKey: key, baseUrl: svc.front.url, sleep });
  svc.front.script("forward");
  const err = await client.removeBackground(TINY_PNG, { size: "huge" as RemoveSize }).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError, String(err));
  assert.equal(err.kind, "response");
  assert.equal(err.status, 400);
  assert.equal(err.code, "unsupported_parameter");
  assert.match(err.requestId ?? "", REQUEST_ID);
  assert.equal(err.attempts, 1);
  assert.ok(err.title.length > 0);
  assert.match(err.message, new RegExp(err.requestId!));
  assert.equal(svc.front.count, 1);
  assert.deepEqual(waits, []);
  assert.ok(!String(err).includes(key) && !JSON.stringify({ ...err }).includes(key), "the key never appears in an error");
});

test("a 401 for an unknown key is final", async () => {
  const client = createClient({ apiKey: "pd_live_doesnotexist0000000000000000", baseUrl: svc.front.url, sleep: recordingSleep().sleep });
  svc.front.script("forward");
  const err = await client.removeBackground(TINY_PNG, { size: "preview" }).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError);
  assert.equal(`${err.status} ${err.code}`, "401 invalid_api_key");
  assert.match(err.requestId ?? "", REQUEST_ID);
  assert.equal(svc.front.count, 1);
});

test("402, 403, 413, other 429s, 500, 502 and 504 are never sent again", async () => {
  const cases: [number, string][] = [
    [402, "insufficient_credits"],
    [403, "key_suspended"],
    [403, "product_not_enabled"],
    [413, "file_too_large"],
    [429, "rate_limited"],
    [429, "daily_limit_reached"],
    [429, "test_quota_exceeded"],
    [500, "inference_failed"],
    [502, "upstream_error"],
    [504, "upstream_timeout"],
  ];
  for (const [status, code] of cases) {
    const { waits, sleep } = recordingSleep();
    const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep });
    svc.front.script({ status, code, headers: { "retry-after": "1" } });
    const err = await client.removeBackground(TINY_PNG).catch((e: unknown) => e);
    assert.ok(err instanceof PixeldropError, `${status} ${code}: ${String(err)}`);
    assert.equal(`${err.status} ${err.code}`, `${status} ${code}`);
    assert.equal(err.requestId, "req_front_1");
    assert.equal(err.retryAfter, 1, "Retry-After is reported even when not acted on");
    assert.equal(err.attempts, 1);
    assert.equal(svc.front.count, 1, `${status} ${code} was sent again`);
    assert.deepEqual(waits, []);
  }
});

test("an answer without the JSON envelope is a typed error with code unknown", async () => {
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep: recordingSleep().sleep });
  svc.front.script({ status: 502, body: "<html>Bad Gateway</html>", headers: { "content-type": "text/html" } });
  const err = await client.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError);
  assert.equal(`${err.kind} ${err.status} ${err.code}`, "response 502 unknown");
  assert.match(err.title, /HTTP 502/);
  assert.equal(svc.front.count, 1);
});

test("without an Idempotency-Key a connection broken while a 200 is read is final: the image was already made and charged", async () => {
  // A fake fetch whose answer body fails half-way, as a reset connection would.
  let calls = 0;
  const fetch = async () => {
    calls++;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(PNG_SIGNATURE));
        c.error(new Error("socket hang up"));
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "image/png", "x-pd-request-id": "req_broken" } });
  };
  const client = createClient({ apiKey: "pd_live_x", baseUrl: "http://service.invalid", fetch, sleep: recordingSleep().sleep });
  const err = await client.removeBackground(TINY_PNG, { idempotencyKey: false }).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropNetworkError, String(err));
  assert.equal(err.status, 200);
  assert.equal(err.requestId, "req_broken");
  assert.equal(calls, 1);

  // With a key (the default) it is sent again, after 1 s, with the same key: the service
  // answers a replay without charging again. Here every answer breaks: 3 attempts.
  calls = 0;
  const keys: (string | null)[] = [];
  const sleep = recordingSleep();
  const keyed = createClient({
    apiKey: "pd_live_x",
    baseUrl: "http://service.invalid",
    sleep: sleep.sleep,
    fetch: async (_url: string, init: RequestInit) => {
      keys.push(new Headers(init.headers).get("idempotency-key"));
      return fetch();
    },
  });
  const again = await keyed.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(again instanceof PixeldropNetworkError, String(again));
  assert.deepEqual([again.status, again.attempts, calls], [200, 3, 3]);
  assert.deepEqual(sleep.waits, [1000, 1000]);
  assert.equal(new Set(keys).size, 1, "one key for the call");
  assert.match(keys[0] ?? "", /^[0-9a-f-]{36}$/);
});

test("Retry-After is read as seconds or as an HTTP date", () => {
  const now = Date.UTC(2026, 0, 1, 0, 0, 0);
  assert.equal(parseRetryAfter("7", now), 7);
  assert.equal(parseRetryAfter(" 0 ", now), 0);
  assert.equal(parseRetryAfter(new Date(now + 30_500).toUTCString(), now), 30);
  assert.equal(parseRetryAfter(new Date(now - 5_000).toUTCString(), now), 0);
  assert.equal(parseRetryAfter("soon", now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
});

test("createClient refuses a missing key or a base URL that is not http(s)", () => {
  assert.throws(() => createClient({ apiKey: "", baseUrl: "http://x" }), TypeError);
  assert.throws(() => createClient({ apiKey: "k", baseUrl: "localhost:8080" }), TypeError);
  assert.throws(() => createClient({ apiKey: "k", baseUrl: "http://x", maxResends: -1 }), TypeError);
});

test("the package's client entry is src/client, built, and src/client uses no Node built-ins", async () => {
  // "pixeldrop/client" resolves to dist/client/ (npm test builds it first): same exports as the sources.
  assert.match(import.meta.resolve("pixeldrop/client"), /\/dist\/client\/index\.js$/);
  const viaPackage = await import("pixeldrop/client");
  const sources = await import("../../src/client/index.ts");
  assert.deepEqual(Object.keys(viaPackage).sort(), Object.keys(sources).sort());
  assert.equal(typeof viaPackage.createClient, "function");
  const dir = new URL("../../src/client/", import.meta.url);
  for (const name of await readdir(dir)) {
    const text = await readFile(new URL(name, dir), "utf8");
    assert.doesNotMatch(text, /from\s+["']node:|require\(|\bprocess\.|\bBuffer\b/, `${name} must run in browsers and Deno too`);
  }
});

// The deno binary of the npm `deno` package, when installed.
const DENO = fileURLToPath(new URL("../../node_modules/.bin/deno", import.meta.url));

test("the client runs under Deno: a cut-out and a typed error", { skip: !existsSync(DENO) && "deno is not installed" }, async () => {
  const script = fileURLToPath(new URL("deno-call.ts", import.meta.url));
  const image = Buffer.from(TINY_PNG).toString("base64");
  const call = async (key: string) => {
    const { stdout } = await promisify(execFile)(DENO, ["run", "--no-lock", "--allow-net=127.0.0.1", script, svc.url, key, image], {
      env: { ...process.env, NO_COLOR: "1" },
    });
    return JSON.parse(stdout.trim()) as Record<string, unknown>;
  };
  const ok = await call(svc.customer.liveKey);
  assert.deepEqual([ok.ok, ok.signature, ok.chargedKrw, ok.width], [true, [0x89, 0x50, 0x4e, 0x47], 22, 64]);
  assert.match(String(ok.requestId), REQUEST_ID);
  const bad = await call("pd_live_notakey000000000000000000000");
  assert.deepEqual([bad.ok, bad.status, bad.code], [false, 401, "invalid_api_key"]);
  assert.match(String(bad.requestId), REQUEST_ID);
});
