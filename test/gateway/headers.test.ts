// Response headers (spec §4 response headers, §7 "The response carries X-PD-Request-Id",
// DECISIONS.md "Responses" and "Retry-After values"): the request ID on every answer of
// the service, the success headers, and Retry-After only where a retry makes sense.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { expectError, gatewayHarness, randomIp, TINY_PNG, TINY_W, TINY_H, type GatewayHarness } from "./helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const ID = /^req_[0-9a-hjkmnp-tv-z]{26}$/;

describe("X-PD-Request-Id on every response", () => {
  test("success, errors, unknown paths, wrong methods, admin and health answers", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const app = g.h.app;
    const answers: [string, Response][] = [
      ["removebg 200", await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" })],
      ["removebg 400", await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "hd" })],
      ["removebg 401", await g.removebg("nope", {}, { ip: randomIp() })],
      ["removebg 402", await g.removebg((await g.h.customer()).liveKey, { image_file: TINY_PNG })],
      ["account 200", await g.account(c.liveKey)],
      ["404", await app.request("/v1.0/nothing-here")],
      ["404 version", await app.request("/v2.0/removebg", { method: "POST" })],
      ["405", await app.request("/v1.0/removebg", { method: "GET" })],
      ["admin 200", await app.request("/admin/v1/product", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })],
      ["admin 401", await app.request("/admin/v1/product")],
      ["admin 404", await app.request("/admin/v1/orgs/org_missing", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })],
      ["healthz", await app.request("/healthz")],
      ["readyz", await app.request("/readyz")],
    ];
    const ids = new Set<string>();
    for (const [name, res] of answers) {
      const id = res.headers.get("x-pd-request-id");
      assert.match(id ?? "", ID, name);
      ids.add(id!);
      await res.arrayBuffer();
    }
    assert.equal(ids.size, answers.length, "each response has its own ID");
  });

  test("405 names the allowed method; 404 uses the error envelope", async () => {
    const res = await g.h.app.request("/v1.0/removebg", { method: "PUT" });
    await expectError(res.clone(), 405, "method_not_allowed");
    assert.equal(res.headers.get("allow"), "POST");
    await expectError(await g.h.app.request("/v1.0/removebg/extra"), 404, "not_found");
  });

  test("the ID of an error answer finds its request-log row", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const e = await expectError(await g.removebg(c.liveKey, { image_file: TINY_PNG, crop: "true" }), 400, "unsupported_parameter");
    const row = await g.h.admin("GET", `/requests/${e.requestId}`);
    assert.equal(row.status, 200);
    assert.deepEqual(
      [row.json.requestId, row.json.status, row.json.errorCode, row.json.chargedKrw, row.json.orgId, row.json.keyKind],
      [e.requestId, 400, "unsupported_parameter", 0, c.orgId, "live"],
    );
    // A stranger's refusal names no app: its access-log line is its record
    // (test/gateway/refusal-log.test.ts), and the row is not found.
    const stranger = await expectError(await g.removebg(undefined, {}, { ip: randomIp() }), 401, "invalid_api_key");
    const row2 = await g.h.admin("GET", `/requests/${stranger.requestId}`);
    assert.equal(row2.status, 404);
  });
});

describe("success headers", () => {
  test("X-Width, X-Height, X-Processing-Ms and the PNG they describe", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "full" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("x-width"), String(TINY_W));
    assert.equal(res.headers.get("x-height"), String(TINY_H));
    assert.match(res.headers.get("x-processing-ms") ?? "", /^\d+$/);
    const png = new Uint8Array(await res.arrayBuffer());
    const v = new DataView(png.buffer);
    assert.deepEqual([v.getUint32(16), v.getUint32(20)], [TINY_W, TINY_H], "IHDR matches the headers");
    for (const h of ["x-foreground-top", "x-foreground-left", "x-foreground-width", "x-foreground-height"]) {
      assert.match(res.headers.get(h) ?? "", /^\d+$/, h);
    }
    assert.equal(res.headers.get("retry-after"), null);
  });

  test("charge headers only on a paid success; test headers only for test keys", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const cases: [string, Response, boolean, boolean][] = [
      ["live 200", await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }), true, false],
      ["live 400", await g.removebg(c.liveKey, { image_file: TINY_PNG, format: "jpg" }), false, false],
      ["test 200", await g.removebg(c.testKey, { image_file: TINY_PNG }), false, true],
      ["test 400", await g.removebg(c.testKey, { image_file: TINY_PNG, crop: "true" }), false, true],
    ];
    for (const [name, res, charged, testHeaders] of cases) {
      assert.equal(res.headers.has("x-pd-charged-krw"), charged, `${name}: X-PD-Charged-KRW`);
      assert.equal(res.headers.has("x-pd-balance-krw"), charged, `${name}: X-PD-Balance-KRW`);
      assert.equal(res.headers.get("x-pd-test-size"), testHeaders ? "preview" : null, `${name}: X-PD-Test-Size`);
      assert.equal(res.headers.has("x-pd-test-remaining"), testHeaders, `${name}: X-PD-Test-Remaining`);
      const success = res.status === 200;
      for (const h of ["x-width", "x-height", "x-processing-ms"]) assert.equal(res.headers.has(h), success, `${name}: ${h}`);
      await res.arrayBuffer();
    }
  });
});

describe("Retry-After", () => {
  test("absent on answers that a retry cannot fix", async () => {
    const c = await g.h.customer({ creditKrw: 10 });
    const suspended = await g.h.customer({ creditKrw: 1000, live: false });
    await g.h.admin("POST", `/keys/${suspended.testKeyId}/suspend`);
    const answers: [number, string, Response][] = [
      [400, "unsupported_parameter", await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "hd" })],
      [401, "invalid_api_key", await g.removebg("pd_test_" + "k".repeat(40), {}, { ip: randomIp() })],
      [402, "insufficient_credits", await g.removebg(c.liveKey, { image_file: TINY_PNG })],
      [403, "key_suspended", await g.removebg(suspended.testKey, { image_file: TINY_PNG })],
      [
        413,
        "file_too_large",
        await g.h.app.request("/v1.0/removebg", {
          method: "POST",
          body: "x",
          headers: { "x-api-key": c.liveKey, "x-forwarded-for": g.ip, "content-length": "12000001", "content-type": "multipart/form-data; boundary=b" },
        }),
      ],
    ];
    for (const [status, code, res] of answers) {
      const e = await expectError(res, status, code);
      assert.equal(e.retryAfter, null, code);
    }
  });
});
