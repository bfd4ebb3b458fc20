// Every operation of the served document (/openapi.json, fetched from the app), called
// with requests generated from that document, valid and broken (generated-requests.ts),
// in every key and organization state; every answer checked against the document
// (contract.ts): status listed, media type, body schema, required headers, our headers
// documented. A baseline per operation must get its documented success. The same run
// against a doctored copy of the document must find what was doctored, which is what
// shows the checker can fail. Embedded stores (the default a new install runs on) and
// the small stub model, as the gateway suites use. Size of a run: GENERATED_PER_OPERATION
// (default below) requests per operation, fixed seed (GENERATED_SEED to vary it).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayHarness, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { createChecker } from "./contract.ts";
import { makeFixtures, multipartBytes, runGenerated, type Fixtures, type GenRequest } from "./generated-requests.ts";

const PER_OPERATION = Number(process.env.GENERATED_PER_OPERATION ?? 64);
const SEED = Number(process.env.GENERATED_SEED ?? 20261125);

type Json = Record<string, any>;
let g: GatewayHarness;
let doc: Json;
let f: Fixtures;
before(async () => {
  g = await gatewayHarness({ embedded: true });
  const res = await g.h.app.request("/openapi.json");
  assert.equal(res.status, 200);
  doc = (await res.json()) as Json;
  f = await makeFixtures(g.h);
});
after(() => g.close());

/** Keeps the service-wide sale status available and the test clock moving (per-minute windows). */
async function afterEach(r: GenRequest) {
  g.clock.advance(7_000);
  if (r.template === "/admin/v1/product" && r.method === "PUT") await g.h.admin("PUT", "/product", { status: "available" });
}

/** One valid request per operation; returns problems and any answer that is not the documented success. */
async function baselines(d: Json) {
  const checker = createChecker(d);
  const c = await g.h.customer({ creditKrw: 10_000 });
  await g.h.admin("PATCH", `/orgs/${c.orgId}`, { refundPending: true });
  const ids: Record<string, string> = { orgId: c.orgId, appId: c.appId, keyId: c.testKeyId, requestId: f.ids.requestId.at(-1)! };
  // An app with no keys yet, for issuing one.
  const bare = (await g.h.admin("POST", `/orgs/${c.orgId}/apps`, { name: "bare", productEnabled: true })).json.appId as string;
  const fresh = await g.h.customer({ creditKrw: 10_000 });
  const form = multipartBytes([{ name: "image_file", filename: "a.png", data: TINY_PNG }, { name: "size", data: "preview" }]);
  const problems: string[] = [];
  const notSuccess: string[] = [];
  for (const [method, template] of checker.operations()) {
    const op = d.paths[template][method] as Json;
    const success = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s)).sort()[0];
    const sec = ((op.security ?? []) as Json[]).flatMap((s) => Object.keys(s));
    const headers: Record<string, string> = { "x-forwarded-for": "10.78.0.1" };
    if (sec.includes("apiKey")) headers["x-api-key"] = f.keys.liveActive!;
    if (sec.includes("operatorToken")) headers.authorization = `Bearer ${OPERATOR_TOKEN}`;
    // A key route that ends the key (delete) or replaces it works on the other fixture.
    const pathIds = template.includes("/keys/{keyId}") && method !== "post" ? { ...ids, keyId: fresh.liveKeyId! } : ids;
    let url = template.replace(/\{([^}]+)\}/g, (_, n: string) => pathIds[n]!);
    if (template.endsWith("/reissue")) url = url.replace(c.testKeyId, fresh.testKeyId);
    if (template.endsWith("/{appId}/keys")) url = url.replace(c.appId, bare);
    // Query parameters: the document's examples.
    const query = ((op.parameters ?? []) as Json[]).filter((p) => p.in === "query" && p.example !== undefined);
    if (query.length) url += `?${query.map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(p.example))}`).join("&")}`;
    let body: BodyInit | undefined;
    const media = op.requestBody ? (Object.entries(op.requestBody.content)[0] as [string, Json]) : undefined;
    if (media?.[0] === "multipart/form-data") {
      headers["content-type"] = form.type;
      body = form.bytes as Uint8Array<ArrayBuffer>;
    } else if (media) {
      headers["content-type"] = "application/json";
      const example = { ...(media[1].example ?? {}) };
      if ("email" in example) example.email = `b${crypto.randomUUID()}@example.com`;
      body = JSON.stringify(example);
    }
    const res = await g.h.app.request(url, { method: method.toUpperCase(), headers, body });
    const text = await res.text();
    problems.push(...checker.check(method, template, { status: res.status, headers: res.headers, text }));
    if (String(res.status) !== success) notSuccess.push(`${method.toUpperCase()} ${template}: ${res.status} ${text.slice(0, 120)}`);
  }
  return { problems, notSuccess, operations: checker.operations().length };
}

test("baselines: every operation of the served document answers a valid request with its documented success", async () => {
  const b = await baselines(doc);
  assert.ok(b.operations >= 20, `${b.operations} operations`);
  assert.deepEqual(b.notSuccess, []);
  assert.deepEqual(b.problems, []);
});

test(`generated requests (${PER_OPERATION} per operation): every answer is one the document gives`, async () => {
  const t0 = performance.now();
  const r = await runGenerated(g.h, doc, createChecker(doc), f, { perOperation: PER_OPERATION, seed: SEED, after: afterEach });
  const ops = createChecker(doc).operations();
  console.log(
    `generated requests: ${r.requests} across ${r.byOperation.size} operations in ${Math.round(performance.now() - t0)} ms; statuses seen: ` +
      [...r.statuses].map(([op, s]) => `${op} ${[...s].sort().join("/")}`).join("; "),
  );
  assert.equal(r.byOperation.size, ops.length, "every operation was called");
  assert.deepEqual(r.problems.slice(0, 40), [], `${r.problems.length} problems`);
  // The broken requests must reach refusals beyond auth: some 404s and 400s at least.
  const all = new Set([...r.statuses.values()].flatMap((s) => [...s]));
  for (const s of [200, 201, 400, 401, 404, 415]) assert.ok(all.has(s), `no ${s} seen`);
});

test("headers sent on every answer that lists them are marked required, so a validator catches one missing", () => {
  const headers = doc.components.headers as Json;
  const required = Object.keys(headers).filter((n) => headers[n].required === true).sort();
  assert.deepEqual(required, ["CacheControl", "WwwAuthenticate", "XForegroundHeight", "XForegroundLeft", "XForegroundTop", "XForegroundWidth", "XHeight", "XPdRequestId", "XProcessingMs", "XWidth"]);
  // Every response of every operation lists X-PD-Request-Id.
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      for (const [status, r] of Object.entries((op as Json).responses as Json)) {
        assert.equal((r as Json).headers?.["X-PD-Request-Id"]?.$ref, "#/components/headers/XPdRequestId", `${method} ${path} ${status}`);
      }
    }
  }
});

test("the same checks against a doctored copy of the document find every change", async () => {
  const bad = structuredClone(doc) as Json;
  // 1. a status the operation gives, removed
  delete bad.paths["/admin/v1/orgs/{orgId}"].get.responses["404"];
  // 2. a body field the answer never has, required
  bad.components.schemas.OrgView.required.push("nickname");
  // 3. a header the answers do not carry, required
  bad.components.headers.XPdChargedKrw.required = true;
  // 4. a media type the answer has, removed
  delete bad.paths["/v1.0/removebg"].post.responses["200"].content["image/png"];
  // 5. the request id's published shape, changed
  bad.components.headers.XPdRequestId.schema.pattern = "^request_[0-9a-z]{26}$";
  // 6. a documented error code, removed from an operation's list
  bad.paths["/admin/v1/orgs/{orgId}"].patch.responses["415"].content["application/json"].schema.allOf[1].properties.errors.items.properties.code.enum = ["conflict"];
  const r = await runGenerated(g.h, bad, createChecker(bad), f, { perOperation: 12, seed: SEED, after: afterEach });
  const b = await baselines(bad);
  const problems = [...r.problems, ...b.problems];
  const found = (re: RegExp) => problems.some((p) => re.test(p));
  assert.ok(found(/GET \/admin\/v1\/orgs\/\{orgId\} → 404: status not listed/), "removed 404");
  assert.ok(found(/→ 200: body does not match the schema: .*nickname/), "required field");
  assert.ok(found(/required header X-PD-Charged-KRW missing/), "required header");
  assert.ok(found(/POST \/v1.0\/removebg → 200: media type "image\/png" not listed/), "media type");
  assert.ok(found(/header X-PD-Request-Id: "req_[0-9a-z]{26}" .*pattern/), "request id pattern");
  assert.ok(found(/PATCH \/admin\/v1\/orgs\/\{orgId\} → 415: body does not match the schema/), "error code");
});
