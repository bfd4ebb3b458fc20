// Successful answers agree with the document: each operation is called once with the
// status the document gives, and its body parses with the schema the document
// publishes (the same zod schema), strictly, so an extra or renamed field fails.
// Response headers of ours must be documented, and every documented success header
// of removebg must show up on a live or a test answer.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { OPERATIONS } from "../../src/openapi/operations.ts";
import { multipart, TINY_PNG, gatewayHarness, type GatewayHarness } from "../gateway/helpers.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { ourHeaders } from "./contract.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true });
});
after(() => g.close());

const exercised = new Set<string>();
const image = { image_file: TINY_PNG, size: "preview" };

/** Headers of ours on an answer (lower case); caching headers are not part of the contract. */

interface CallOptions {
  params?: Record<string, string>;
  query?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string | Uint8Array>;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** Calls a documented operation; checks status, content type, body schema and headers. */
async function call(operationId: string, o: CallOptions = {}): Promise<{ res: Response; body: any }> {
  const op = OPERATIONS.find((x) => x.operationId === operationId);
  assert.ok(op, `${operationId} documented`);
  exercised.add(operationId);
  const path =
    op.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(o.params?.[name] ?? assert.fail(`param ${name}`))) +
    (o.query ? `?${new URLSearchParams(o.query)}` : "");
  const headers: Record<string, string> = { "x-forwarded-for": g.ip, ...o.headers };
  if (op.security === "operatorToken") headers.authorization = `Bearer ${OPERATOR_TOKEN}`;
  if (op.security === "apiKey") headers["x-api-key"] = o.apiKey ?? assert.fail("an API key");
  let body: BodyInit | undefined;
  if (o.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(o.json);
  } else if (o.form) body = multipart(o.form);
  const res = await g.h.app.request(path, { method: op.method.toUpperCase(), headers, body });
  const text = await res.clone().text();
  assert.equal(res.status, op.success.status, `${operationId}: ${text.slice(0, 300)}`);
  const documentedHeaders = new Set((op.success.headers ?? []).map((h) => h.toLowerCase()));
  assert.deepEqual(ourHeaders(res).filter((h) => !documentedHeaders.has(h)), [], `${operationId}: undocumented headers`);
  const contents = op.success.contents ?? [];
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
  const content = contents.find((c) => c.mediaType === type);
  assert.ok(content, `${operationId}: content type ${type} is not documented (${contents.map((c) => c.mediaType).join(", ")})`);
  let parsed: unknown;
  if (type === "application/json") {
    parsed = JSON.parse(text);
    if (content.schema instanceof z.ZodType) {
      const r = content.schema.safeParse(parsed);
      assert.ok(r.success, `${operationId}: body does not match the documented schema: ${r.success ? "" : z.prettifyError(r.error)}\n${text}`);
    }
  }
  return { res, body: parsed };
}

describe("public API", () => {
  test("removebg: live and test answers carry exactly the documented success headers between them", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const live = await call("removeBackground", { apiKey: c.liveKey, form: image });
    const testKey = await call("removeBackground", { apiKey: c.testKey, form: image });
    // A replay of a keyed call carries Idempotent-Replayed.
    const keyed = { "idempotency-key": crypto.randomUUID() };
    await call("removeBackground", { apiKey: c.liveKey, form: image, headers: keyed });
    const replay = await call("removeBackground", { apiKey: c.liveKey, form: image, headers: keyed });
    const seen = new Set([...ourHeaders(live.res), ...ourHeaders(testKey.res), ...ourHeaders(replay.res)]);
    const op = OPERATIONS.find((x) => x.operationId === "removeBackground")!;
    const never = (op.success.headers ?? []).filter((h) => !seen.has(h.toLowerCase()));
    assert.deepEqual(never, [], "documented success headers that no answer carried");
    assert.equal(live.res.headers.get("content-type"), "image/png");
  });

  test("removebg: the JSON form (Accept: application/json) matches RemoveBgJson", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { body } = await call("removeBackground", { apiKey: c.liveKey, form: image, headers: { accept: "application/json" } });
    assert.ok(body.data.result_b64.length > 0);
  });

  test("account: live and test forms", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    assert.equal((await call("getAccount", { apiKey: c.liveKey })).body.data.kind, "live");
    assert.equal((await call("getAccount", { apiKey: c.testKey })).body.data.kind, "test");
  });

  test("health, readiness, metrics and the description itself", async () => {
    await call("getHealth");
    await call("getReadiness");
    await call("getMetrics");
    await call("getOpenApiDocument");
    await call("getApiReference");
  });

  test("the internal product endpoint, with the operator token", async () => {
    await call("internalRemoveBackground", { form: image });
  });
});

describe("operator API", () => {
  test("every operation, in the order an operator would use them", async () => {
    const org = (await call("createOrg", { json: { email: `u${crypto.randomUUID()}@example.com` } })).body;
    const orgId = { orgId: org.orgId };
    await call("getOrg", { params: orgId });
    await call("patchOrg", { params: orgId, json: { dailyLimitKrw: 40_000 } });
    await call("creditOrg", { params: orgId, json: { amountKrw: 1000 } });
    const app = (await call("createApp", { params: orgId, json: { name: "docs", productEnabled: true } })).body;
    await call("patchApp", { params: { appId: app.appId }, json: { monthlyLimitKrw: null } });
    const live = (await call("issueKey", { params: { appId: app.appId }, json: { kind: "live" } })).body;
    const next = (await call("reissueKey", { params: { keyId: live.keyId } })).body;
    await call("suspendKey", { params: { keyId: next.keyId } });
    await call("unsuspendKey", { params: { keyId: next.keyId } });
    const paid = await g.removebg(next.key, image);
    assert.equal(paid.status, 200);
    await paid.arrayBuffer();
    const requestId = paid.headers.get("x-pd-request-id")!;
    await call("getRequest", { params: { requestId } });
    await call("deleteKey", { params: { keyId: next.keyId } });
    await call("getProductStatus");
    await call("putProductStatus", { json: { status: "available" } });
    await g.h.admin("PATCH", `/orgs/${org.orgId}`, { refundPending: true });
    await call("completeRefund", { params: orgId, json: {} });
    await call("getReconciliation", { query: { from: "2025-05-01", to: "2025-05-31T00:00:00+09:00" } });
  });
});

test("every documented operation was exercised above", () => {
  assert.deepEqual(
    OPERATIONS.map((o) => o.operationId).filter((id) => !exercised.has(id)),
    [],
  );
});
