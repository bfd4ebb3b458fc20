// One middleware's headers on every answer (src/http/security-headers.ts;
// docs/SECURITY.md, "Security headers"): the API reference, the OpenAPI document,
// static files, the console, the API's errors, health, metrics and unknown paths. HSTS
// only behind an https PUBLIC_URL. The reference page's inline style is allowed by its
// hash, and that hash is the style's.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { headerRecordOf } from "../../src/http/error-response.ts";
import { HSTS, NONE_CSP, PAGE_CSP } from "../../src/http/security-headers.ts";
import { makeHarness, type Harness } from "../support/harness.ts";

let https: Harness;
let plain: Harness;
before(async () => {
  https = await makeHarness({ embedded: true, env: { PUBLIC_URL: "https://pixeldrop.example" } });
  plain = await makeHarness({ embedded: true });
});
after(async () => {
  await https?.close();
  await plain?.close();
});

const requests: [string, RequestInit?][] = [
  ["/docs/api"],
  ["/openapi.json"],
  ["/console/static/style.css"],
  ["/console/static/playground.js"],
  ["/console/static/chelsea.jpg"],
  ["/"],
  ["/console/sign-in"],
  ["/console/apps"], // a redirect to sign in
  ["/console/sign-in", { method: "POST", body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } }], // 403
  ["/v1.0/removebg", { method: "POST" }], // 401
  ["/v1.0/account"],
  ["/healthz"],
  ["/readyz"],
  ["/metrics"], // 401 without the operator token
  ["/admin/v1/orgs"],
  ["/no/such/path"],
];

test("every answer: nosniff, no framing, no referrer, a CSP; HSTS behind an https PUBLIC_URL only", async () => {
  for (const [path, init] of requests) {
    for (const [h, withHsts] of [[https, true], [plain, false]] as const) {
      const res = await h.app.request(path, init);
      const what = `${init?.method ?? "GET"} ${path} (${res.status})`;
      await res.arrayBuffer();
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
      assert.equal(res.headers.get("x-frame-options"), "DENY", what);
      assert.equal(res.headers.get("referrer-policy"), "no-referrer", what);
      const csp = res.headers.get("content-security-policy") ?? "";
      assert.match(csp, /frame-ancestors 'none'/, what);
      if (/^text\/html/.test(res.headers.get("content-type") ?? "")) assert.match(csp, /script-src 'self'|default-src 'self'/, what);
      else assert.equal(csp, NONE_CSP, `${what}: a non-page answer may load nothing`);
      assert.equal(res.headers.get("strict-transport-security"), withHsts ? HSTS : null, what);
    }
  }
});

test("console pages get the page policy; the API reference allows exactly its own inline style", async () => {
  const page = await https.app.request("/console/sign-in");
  assert.equal(page.headers.get("content-security-policy"), PAGE_CSP);
  const ref = await https.app.request("/docs/api");
  const html = await ref.text();
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  assert.equal(styles.length, 1);
  const hash = createHash("sha256").update(styles[0]!).digest("base64");
  const csp = ref.headers.get("content-security-policy") ?? "";
  assert.match(csp, new RegExp(`style-src 'sha256-${hash.replace(/[+/=]/g, "\\$&")}'`));
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.doesNotMatch(html, /<script|style="/, "nothing else inline that the policy would block");
});

test("the public API's refusals are made with the headers (the middleware then leaves them as made: a flood of refusals pays for no header object)", async () => {
  for (const [h, withHsts] of [[https, true], [plain, false]] as const) {
    const res = await h.app.request("/v1.0/removebg", { method: "POST" });
    assert.equal(res.status, 401);
    const made = headerRecordOf(res);
    assert.ok(made, "the answer is the error renderer's own, not a copy the middleware made");
    assert.equal(made["x-frame-options"], "DENY");
    assert.equal(made["content-security-policy"], NONE_CSP);
    assert.equal(made["strict-transport-security"], withHsts ? HSTS : undefined);
  }
});
