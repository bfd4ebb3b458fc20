// Input the operator API's own clients never send, on the embedded default and on
// Postgres: path ids that cannot be ours (a NUL byte, bytes that are not UTF-8, other
// shapes) are 404 not_found on every route that takes one, never 500; bodies are held
// to the document's application/json (415 for another media type, 400 for a missing
// required body); text the database cannot hold inside a JSON body is 400, not 500.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { OPERATIONS } from "../../src/openapi/operations.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { errorIn, gatewayHarness, type GatewayHarness } from "../gateway/helpers.ts";

/** Path values no id of ours can have; each is put where the route takes its id. */
const BAD_IDS = ["%00", "org_a%00b", "app_%00", "key_x%00", "req_%00", "%FF%FE", "%C3%28", "%E2%82", "x".repeat(300), "org_%C3%A4", "%20", "org_x%20y", "..%2F..", "%F0%9F%98%80"];

const ADMIN_WITH_IDS = OPERATIONS.filter((o) => o.security === "operatorToken" && o.path.startsWith("/admin/v1") && (o.pathParams?.length ?? 0) > 0);
const ADMIN_WITH_BODY = OPERATIONS.filter((o) => o.path.startsWith("/admin/v1") && o.requestBody);

function exampleOf(op: (typeof OPERATIONS)[number]): string {
  const ex = op.requestBody?.contents[0]?.example;
  return JSON.stringify(ex ?? {});
}

for (const embedded of [true, false]) {
  describe(embedded ? "embedded stores" : "Postgres and Redis", () => {
    let g: GatewayHarness;
    before(async () => {
      g = await gatewayHarness({ embedded });
    });
    after(() => g.close());

    const call = (method: string, path: string, init: { body?: string; type?: string | null } = {}) => {
      const headers: Record<string, string> = { authorization: `Bearer ${OPERATOR_TOKEN}` };
      if (init.type !== null) headers["content-type"] = init.type ?? "application/json";
      return g.h.app.request(path, { method, headers, body: init.body });
    };

    test(`every operator route taking an id (${ADMIN_WITH_IDS.length}) answers ${BAD_IDS.length} impossible ids with 404 not_found`, async () => {
      const wrong: string[] = [];
      for (const op of ADMIN_WITH_IDS) {
        for (const bad of BAD_IDS) {
          const path = op.path.replace(/:[A-Za-z]+/g, bad);
          const res = await call(op.method.toUpperCase(), path, { body: op.requestBody ? exampleOf(op) : undefined });
          const e = await errorIn(res);
          if (`${e.status} ${e.code}` !== "404 not_found") wrong.push(`${op.method.toUpperCase()} ${path}: ${e.status} ${e.code} ${e.title}`);
          assert.match(e.requestId ?? "", /^req_[0-9a-z]{26}$/);
        }
      }
      assert.deepEqual(wrong, []);
    });

    test("a body that is not sent as application/json is 415; a missing required body is 400", async () => {
      const c = await g.h.customer();
      const ids: Record<string, string> = { orgId: c.orgId, appId: c.appId, keyId: c.testKeyId };
      const wrong: string[] = [];
      for (const op of ADMIN_WITH_BODY) {
        const path = op.path.replace(/:([A-Za-z]+)/g, (_, n: string) => ids[n]!);
        const method = op.method.toUpperCase();
        const body = exampleOf(op);
        for (const type of ["text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", null]) {
          const e = await errorIn(await call(method, path, { body, type }));
          if (`${e.status} ${e.code}` !== "415 unsupported_media_type") wrong.push(`${method} ${path} as ${type}: ${e.status} ${e.code}`);
        }
        const xml = await errorIn(await call(method, path, { body: "<org><email>a@b.c</email></org>", type: "application/xml" }));
        if (xml.status !== 415) wrong.push(`${method} ${path} XML: ${xml.status}`);
        if (op.requestBody!.required) {
          for (const type of ["application/json", null]) {
            const e = await errorIn(await call(method, path, { type }));
            if (`${e.status} ${e.code}` !== "400 invalid_parameter") wrong.push(`${method} ${path} without a body (${type}): ${e.status} ${e.code}`);
          }
        }
      }
      assert.deepEqual(wrong, []);
      // application/json in any case and with parameters is still JSON.
      const ok = await call("PATCH", `/admin/v1/orgs/${c.orgId}`, { body: '{"dailyLimitKrw":5000}', type: "Application/JSON; charset=utf-8" });
      assert.equal(ok.status, 200);
      // A body the document makes optional may be left out, with or without a media type.
      await g.h.admin("PATCH", `/orgs/${c.orgId}`, { refundPending: true });
      assert.equal((await call("POST", `/admin/v1/orgs/${c.orgId}/refund/complete`, { type: null })).status, 200);
    });

    test("text the database cannot hold inside a JSON body is 400 invalid_parameter", async () => {
      const c = await g.h.customer();
      const cases: [string, string, unknown][] = [
        ["POST", "/admin/v1/orgs", { email: "a\u0000b@example.com" }],
        ["POST", `/admin/v1/orgs/${c.orgId}/apps`, { name: "a\u0000b" }],
        ["PATCH", `/admin/v1/apps/${c.appId}`, { name: "\u0000" }],
        ["PATCH", `/admin/v1/orgs/${c.orgId}`, { refundPending: true }],
        ["POST", `/admin/v1/orgs/${c.orgId}/refund/complete`, { note: "x\u0000" }],
      ];
      const wrong: string[] = [];
      for (const [method, path, body] of cases) {
        const res = await call(method, path, { body: JSON.stringify(body) });
        if (res.status === 200) continue; // the refund-pending switch on the way
        const e = await errorIn(res);
        if (`${e.status} ${e.code}` !== "400 invalid_parameter") wrong.push(`${method} ${path}: ${e.status} ${e.code}`);
      }
      assert.deepEqual(wrong, []);
    });
  });
}
