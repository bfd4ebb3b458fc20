// The client's retry contract (spec §7 Retry 6–7) over real HTTP: a rejection before
// processing (connection error, any 503, 429 key_queue_full) is sent again after
// Retry-After (10 s when absent), at most twice; the overall timeout and the caller's
// signal give their own typed errors. Waits are recorded by an injected sleep, and the
// front server counts what actually arrived.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  createClient,
  PixeldropAbortError,
  PixeldropError,
  PixeldropNetworkError,
  PixeldropTimeoutError,
} from "../../src/client/index.ts";
import { closedPortUrl, type Step } from "./front.ts";
import { recordingSleep, REQUEST_ID, startService, TINY_PNG, type Service } from "./setup.ts";

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc?.close();
});

const busy = (retryAfter?: string, code = "gateway_busy"): Step => ({
  status: 503,
  code,
  headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
});

test("maintenance (a real 503 with Retry-After): sent again twice after the wait, then the error", async (t) => {
  const put = await svc.admin("PUT", "/product", { status: "maintenance" });
  assert.equal(put.status, 200);
  t.after(async () => {
    assert.equal((await svc.admin("PUT", "/product", { status: "available" })).status, 200);
  });
  const { waits, sleep } = recordingSleep();
  // A timeout long enough for both 300 s waits (the injected sleep does not really wait).
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep, timeoutMs: 1_000_000 });
  svc.front.script("forward");
  const err = await client.removeBackground(TINY_PNG, { size: "preview" }).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError, String(err));
  assert.equal(`${err.status} ${err.code}`, "503 service_unavailable");
  const retryAfter = err.retryAfter!;
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 0, `Retry-After ${retryAfter}`);
  assert.equal(err.attempts, 3);
  assert.match(err.requestId ?? "", REQUEST_ID);
  assert.deepEqual(waits, [retryAfter * 1000, retryAfter * 1000]);
  assert.equal(svc.front.count, 3);
});

test("a wait that would outlast the timeout is not started: the 503 comes back at once", async () => {
  const { waits, sleep } = recordingSleep();
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep }); // default 150 s
  svc.front.script(busy("300", "service_unavailable"), "forward");
  const err = await client.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError, String(err));
  assert.equal(`${err.status} ${err.code} ${err.attempts} ${err.retryAfter}`, "503 service_unavailable 1 300");
  assert.deepEqual(waits, []);
  assert.equal(svc.front.count, 1);
});

test("the timeout covers the waits: with a clock, a second wait that ends past 150 s is not started", async () => {
  let clock = 0;
  const { waits, sleep } = recordingSleep((ms) => (clock += ms));
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep, now: () => clock });
  svc.front.script(busy("60"), busy("100"), "forward");
  const err = await client.removeBackground(TINY_PNG, { size: "preview" }).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError, String(err));
  assert.equal(err.attempts, 2);
  assert.equal(err.retryAfter, 100);
  assert.deepEqual(waits, [60_000]);
  assert.equal(svc.front.count, 2);
});

test("a 503 then success: the wait honours Retry-After, or 10 s without it, and the image arrives", async () => {
  for (const [retryAfter, wait] of [["2", 2_000], [undefined, 10_000]] as const) {
    const { waits, sleep } = recordingSleep();
    const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep });
    svc.front.script(busy(retryAfter, "queue_full"), "forward");
    const r = await client.removeBackground(TINY_PNG, { size: "preview" });
    assert.equal(r.chargedKrw, 22);
    assert.match(r.requestId, REQUEST_ID);
    assert.deepEqual(waits, [wait]);
    assert.equal(svc.front.count, 2);
  }
});

test("a 503 without the JSON envelope is still sent again", async () => {
  const { waits, sleep } = recordingSleep();
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep });
  svc.front.script({ status: 503, body: "<html>down</html>", headers: { "content-type": "text/html" } });
  const err = await client.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError);
  assert.equal(`${err.status} ${err.code} ${err.attempts}`, "503 unknown 3");
  assert.deepEqual(waits, [10_000, 10_000]);
  assert.equal(svc.front.count, 3);
});

test("429 key_queue_full is sent again after Retry-After", async () => {
  const { waits, sleep } = recordingSleep();
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep });
  const full = { status: 429, code: "key_queue_full", headers: { "retry-after": "1" } };
  svc.front.script(full, full, "forward");
  const r = await client.removeBackground(TINY_PNG, { size: "preview" });
  assert.equal(r.chargedKrw, 22);
  assert.deepEqual(waits, [1_000, 1_000]);
  assert.equal(svc.front.count, 3);
});

test("at most two resends: three attempts, then the last answer's error", async () => {
  const { waits, sleep } = recordingSleep();
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep });
  svc.front.script(busy("1"));
  const err = await client.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropError);
  assert.equal(`${err.status} ${err.code} ${err.attempts}`, "503 gateway_busy 3");
  assert.equal(err.requestId, "req_front_3");
  assert.deepEqual(waits, [1_000, 1_000]);
  assert.equal(svc.front.count, 3);

  // maxResends is honoured as given.
  const none = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep, maxResends: 0 });
  svc.front.script(busy("1"));
  const once = await none.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(once instanceof PixeldropError && once.attempts === 1);
  assert.equal(svc.front.count, 1);
});

test("a dropped connection is sent again and succeeds", async () => {
  const { waits, sleep } = recordingSleep();
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep });
  svc.front.script("drop", "forward");
  const r = await client.removeBackground(TINY_PNG, { size: "preview" });
  assert.equal(r.chargedKrw, 22);
  assert.deepEqual(waits, [10_000]);
  assert.equal(svc.front.count, 2);
});

test("a refused connection is tried three times, then a typed network error", async () => {
  const { waits, sleep } = recordingSleep();
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: await closedPortUrl(), sleep });
  const err = await client.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropNetworkError, String(err));
  assert.equal(`${err.kind} ${err.status} ${err.code} ${err.attempts}`, "network 0 network_error 3");
  assert.equal(err.requestId, undefined);
  assert.ok(err.cause !== undefined, "the fetch error is kept as cause");
  assert.deepEqual(waits, [10_000, 10_000]);
});

test("a service that never answers gives the typed timeout error", async () => {
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, timeoutMs: 300, sleep: recordingSleep().sleep });
  svc.front.script("hang");
  const err = await client.removeBackground(TINY_PNG).catch((e: unknown) => e);
  assert.ok(err instanceof PixeldropTimeoutError, String(err));
  assert.equal(`${err.kind} ${err.code} ${err.attempts}`, "timeout timeout 1");
  assert.equal(svc.front.count, 1);
});

test("the caller's signal gives the typed abort error, during a request or during a wait", async () => {
  const client = createClient({ apiKey: svc.customer.liveKey, baseUrl: svc.front.url, sleep: recordingSleep().sleep });
  svc.front.script("hang");
  const reason = new Error("user cancelled");
  const ctrl = new AbortController();
  const pending = client.removeBackground(TINY_PNG, { signal: ctrl.signal }).catch((e: unknown) => e);
  while (svc.front.count === 0) await new Promise((r) => setTimeout(r, 10));
  ctrl.abort(reason);
  const err = await pending;
  assert.ok(err instanceof PixeldropAbortError, String(err));
  assert.equal(`${err.kind} ${err.code} ${err.attempts}`, "aborted aborted 1");
  assert.equal(err.cause, reason);

  // Aborted while waiting to resend: no further request is sent.
  const waitCtrl = new AbortController();
  const aborting = createClient({
    apiKey: svc.customer.liveKey,
    baseUrl: svc.front.url,
    sleep: async (_ms, signal) => {
      waitCtrl.abort();
      if (signal.aborted) throw new Error("aborted");
    },
  });
  svc.front.script(busy("1"));
  const during = await aborting.removeBackground(TINY_PNG, { signal: waitCtrl.signal }).catch((e: unknown) => e);
  assert.ok(during instanceof PixeldropAbortError, String(during));
  assert.equal(during.attempts, 1);
  assert.equal(svc.front.count, 1);
});
