// The mirrored API's JSON / urlencoded forms of image_url and image_file_b64 are named
// as unsupported; any other non-multipart body is unreadable (invalid_parameter).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { makeHarness, errorOf, type Harness } from "../support/harness.ts";

let h: Harness;
let key: string;
before(async () => {
  h = await makeHarness({ embedded: true });
  key = (await h.customer({ creditKrw: 1000 })).liveKey;
});
after(() => h.close());

const post = (body: string, type: string) =>
  h.app.request("/v1.0/removebg", { method: "POST", body, headers: { "x-api-key": key, "content-type": type } });

test("JSON body with image_url → 400 unsupported_parameter", async () => {
  const res = await post(JSON.stringify({ image_url: "https://example.com/a.jpg", size: "auto" }), "application/json");
  assert.equal(res.status, 400);
  assert.equal((await errorOf(res)).code, "unsupported_parameter");
});

test("urlencoded body with image_file_b64 → 400 unsupported_parameter", async () => {
  const res = await post("image_file_b64=AAAA&size=preview", "application/x-www-form-urlencoded");
  assert.equal(res.status, 400);
  assert.equal((await errorOf(res)).code, "unsupported_parameter");
});

test("other JSON, or garbage, → 400 invalid_parameter", async () => {
  for (const [body, type] of [["{\"size\":\"auto\"}", "application/json"], ["{not json", "application/json"], ["hello", "text/plain"]]) {
    const res = await post(body, type);
    assert.equal(res.status, 400);
    assert.equal((await errorOf(res)).code, "invalid_parameter", `${type}: ${body}`);
  }
});
