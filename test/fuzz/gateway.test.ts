// Fuzz of the whole public call through app.request(): gateway + in-process product
// service with the stub model (64 × 64) on embedded PGlite. Arbitrary multipart framing,
// headers, parameter values, query strings and image bytes (http-requests.ts). Every
// answer must be a 200 with an image, or a status/code pair from the spec's tables with
// the JSON error envelope; every answer carries X-PD-Request-Id; nothing is charged for
// an error, and the ledger agrees with the X-PD-Charged-KRW headers at the end.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { assertNoOpenHold, balanceOf, gatewayHarness, randomIp, type GatewayHarness } from "../gateway/helpers.ts";
import { mutatedImage } from "./image-mutations.ts";
import { fuzzRequest, type FuzzRequest } from "./http-requests.ts";
import { caseCount, createTally, fuzzSeed, memoryAfterGc } from "./tally.ts";

const CASES = caseCount(200);
const CREDIT = 100_000_000;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The status/code pairs of spec §7 (gateway and product tables), plus 405 for other methods (ours). */
const SPEC_PAIRS = new Set([
  "400 invalid_parameter",
  "400 unsupported_parameter",
  "401 invalid_api_key",
  "402 insufficient_credits",
  "403 key_suspended",
  "403 product_not_enabled",
  "403 refund_pending",
  "403 product_discontinued",
  "413 file_too_large",
  "429 rate_limited",
  "429 daily_limit_reached",
  "429 monthly_limit_reached",
  "429 test_quota_exceeded",
  "429 key_queue_full",
  "502 upstream_error",
  "503 service_unavailable",
  "503 gateway_busy",
  "503 deadline_unreachable",
  "504 upstream_timeout",
  "500 inference_failed",
  "405 method_not_allowed",
]);

const dir = new URL("../fixtures/images/", import.meta.url);
const sources: Record<string, Uint8Array> = {};
for (const name of readdirSync(dir).sort()) sources[name] = new Uint8Array(readFileSync(new URL(name, dir)));
const GOOD = ["orient-upright.png", "orient-6.jpg", "webp-exif-orient-6.webp", "png-palette-trns.png"].map((n) => sources[n]);

let g: GatewayHarness;
let customer: Awaited<ReturnType<GatewayHarness["h"]["customer"]>>;
const tally = createTally(`Gateway fuzz through app.request() (stub model, PGlite), ${CASES} cases`);
const extra: [string, string][] = [];
before(async () => {
  g = await gatewayHarness({ embedded: true });
  customer = await g.h.customer({ creditKrw: CREDIT });
  // The top of the allowed daily limit, so long runs reach the paid path for longer.
  await g.h.admin("PATCH", `/orgs/${customer.orgId}`, { dailyLimitKrw: 1_000_000 });
});
after(async () => {
  console.log(tally.render(extra));
  await g?.close();
});

function keyText(r: FuzzRequest): string | undefined {
  switch (r.key) {
    case "live":
      return customer.liveKey;
    case "test":
      return customer.testKey;
    case "none":
      return undefined;
    case "empty":
      return "";
    case "near-miss":
      return customer.liveKey.slice(0, -1) + (customer.liveKey.endsWith("x") ? "y" : "x");
    case "wrong-kind":
      return "pd_live_" + customer.testKey.slice(8);
    case "garbage":
      return r.garbageKey;
  }
}

function toRequest(r: FuzzRequest): Request {
  const headers = new Headers();
  // Each case from its own address: the per-IP invalid-key guard is tested in test/abuse.
  headers.set("x-forwarded-for", randomIp());
  const key = keyText(r);
  if (key !== undefined) headers.set("x-api-key", key);
  if (r.contentType !== undefined) headers.set("content-type", r.contentType);
  if (r.contentLength !== undefined) headers.set("content-length", r.contentLength);
  if (r.accept !== undefined) headers.set("accept", r.accept);
  const hasBody = r.method !== "GET" && r.method !== "HEAD";
  return new Request(`http://localhost/v1.0/removebg${r.query}`, {
    method: r.method,
    headers,
    body: hasBody && r.body ? (r.body as Uint8Array<ArrayBuffer>) : undefined,
  });
}

test(`every fuzzed request gets a spec answer with a request ID (${CASES} cases)`, { timeout: 6 * 60 * 60_000 }, async () => {
  const images = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...GOOD) }, { weight: 2, arbitrary: mutatedImage(sources) });
  let chargedByHeaders = 0;
  let paidSuccesses = 0;
  const memoryBefore = await memoryAfterGc();

  await fc.assert(
    fc.asyncProperty(fuzzRequest(images), async (r) => {
      // Time moves 7 s per case, so per-minute test-key windows open again now and then.
      g.clock.advance(7_000);
      const t0 = performance.now();
      const res = await g.h.app.request(toRequest(r));
      const ms = performance.now() - t0;
      const id = res.headers.get("x-pd-request-id");
      const label = `${r.kind}, ${r.method}, key ${r.key}`;
      assert.match(id ?? "", /^req_[0-9a-z]{26}$/, `${label}: X-PD-Request-Id on every answer (${res.status})`);

      if (res.status === 200) {
        const type = res.headers.get("content-type") ?? "";
        tally.add(r.kind, "200", ms, label);
        let png: Uint8Array;
        if (type.startsWith("application/json")) {
          const body = (await res.json()) as { data: { result_b64: string } };
          png = Uint8Array.from(atob(body.data.result_b64), (c) => c.charCodeAt(0));
        } else {
          assert.equal(type, "image/png", label);
          png = new Uint8Array(await res.arrayBuffer());
        }
        assert.deepEqual([...png.subarray(0, 8)], PNG_SIGNATURE, label);
        assert.ok(Number(res.headers.get("x-width")) >= 1 && Number(res.headers.get("x-height")) >= 1, label);
        const charged = res.headers.get("x-pd-charged-krw");
        if (r.key === "live") {
          assert.ok(charged === "22" || charged === "110", `${label}: charged ${charged}`);
          chargedByHeaders += Number(charged);
          paidSuccesses++;
        } else {
          assert.equal(charged, null, `${label}: a test key is never charged`);
        }
        return;
      }

      const text = r.method === "HEAD" ? "" : await res.text();
      if (r.method === "HEAD") {
        // A HEAD answer has no body by definition; its status must still be a spec pair.
        tally.add(r.kind, `${res.status} (HEAD)`, ms, label);
        assert.equal(res.status, 405, label);
        return;
      }
      let body: { errors?: { title?: unknown; code?: unknown }[] };
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        tally.add(r.kind, `${res.status} non-JSON`, ms, label);
        assert.fail(`${label}: ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
      assert.ok(Array.isArray(body.errors) && body.errors.length === 1, `${label}: envelope ${text.slice(0, 200)}`);
      const { code, title } = body.errors[0]!;
      assert.equal(typeof title, "string", label);
      assert.deepEqual(Object.keys(body), ["errors"], label);
      const pair = `${res.status} ${String(code)}`;
      tally.add(r.kind, pair, ms, label);
      assert.ok(SPEC_PAIRS.has(pair), `${label}: ${pair} is not in the spec's tables (title: ${String(title)})`);
      assert.equal(res.headers.get("x-pd-charged-krw"), null, `${label}: an error is never charged`);
      if (res.status === 429 || res.status === 503) assert.match(res.headers.get("retry-after") ?? "", /^\d+$/, `${label}: Retry-After on ${pair}`);
    }),
    { numRuns: CASES, seed: fuzzSeed(), endOnFailure: true },
  );

  // Money: what the headers said was charged is what the ledger holds, and nothing stays held.
  await assertNoOpenHold(g.h, customer.orgId);
  const { balanceKrw } = await balanceOf(g.h, customer.orgId);
  assert.equal(CREDIT - balanceKrw, chargedByHeaders, "ledger charges equal the X-PD-Charged-KRW headers");
  const captures = await g.h.services.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM ledger_entries WHERE org_id = $1 AND kind = 'capture'",
    [customer.orgId],
  );
  assert.equal(captures[0]!.n, paidSuccesses, "one capture per paid success");
  extra.push(["paid successes", String(paidSuccesses)], ["charged (KRW)", String(chargedByHeaders)]);
  // Reported, not asserted: the embedded database keeps every request-log row in its
  // own (WASM) memory, which RSS shows and the JS heap does not.
  const memoryAfter = await memoryAfterGc();
  extra.push(
    ["heap after GC, before → after (MB)", `${memoryBefore.heapMb.toFixed(1)} → ${memoryAfter.heapMb.toFixed(1)}`],
    ["RSS after GC, before → after (MB)", `${memoryBefore.rssMb.toFixed(1)} → ${memoryAfter.rssMb.toFixed(1)}`],
    ["collected with --expose-gc", String(memoryAfter.gc)],
  );
});
