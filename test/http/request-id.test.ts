// X-PD-Request-Id always has our shape (^req_[0-9a-z]{26}$): a value sent to us is kept
// only when it is an id we could have minted (the gateway's, on the internal product
// call, kept across resends); anything else is never echoed back.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { isRequestId, newRequestId, requestIdFrom } from "../../src/http/request-id.ts";
import { gatewayHarness, multipart, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true });
});
after(() => g.close());

const NOT_OURS = ["7", "7.5", "true", "x".repeat(8192), "req_", "req_0123456789ABCDEFGHJKMNPQRS", `${newRequestId()}x`, " req_01m8a1n73ntehskd3gd6e0bmpj", "null", "[]"];

test("requestIdFrom keeps ids of our shape and replaces anything else", () => {
  const ours = newRequestId();
  assert.equal(requestIdFrom(ours), ours);
  for (const v of [...NOT_OURS, null, undefined]) {
    const got = requestIdFrom(v);
    assert.ok(isRequestId(got), String(v));
    assert.notEqual(got, v);
  }
});

test("the internal product route never echoes a request id we did not mint; it keeps one we did", async () => {
  const post = (id: string, form: Record<string, string | Uint8Array>) =>
    g.h.app.request("/internal/v1/removebg", {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-pd-request-id": id },
      body: multipart(form),
    });
  const echoed: string[] = [];
  for (const id of NOT_OURS) {
    // A refused call (400: no image) and a processed one (200).
    const forms: Record<string, string | Uint8Array>[] = [{ size: "preview" }, { image_file: TINY_PNG, size: "preview" }];
    for (const form of forms) {
      const res = await post(id, form);
      await res.arrayBuffer();
      const got = res.headers.get("x-pd-request-id") ?? "";
      if (!isRequestId(got) || got === id) echoed.push(`${res.status} ${JSON.stringify(id.slice(0, 40))} -> ${JSON.stringify(got.slice(0, 40))}`);
    }
  }
  assert.deepEqual(echoed, []);
  const ours = newRequestId();
  const kept = await post(ours, { image_file: TINY_PNG, size: "preview" });
  assert.equal(kept.status, 200);
  assert.equal(kept.headers.get("x-pd-request-id"), ours, "the gateway's id travels through");
});

test("every route's answer carries an id of our shape even when one was sent", async () => {
  for (const path of ["/healthz", "/v1.0/account", "/admin/v1/product", "/nowhere", "/openapi.json"]) {
    const res = await g.h.app.request(path, { headers: { "x-pd-request-id": "7", authorization: `Bearer ${OPERATOR_TOKEN}` } });
    await res.arrayBuffer();
    assert.ok(isRequestId(res.headers.get("x-pd-request-id")), `${path}: ${res.headers.get("x-pd-request-id")}`);
  }
});
