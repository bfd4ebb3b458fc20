// The committed Postman collection: the v2.1 format's required shape (what Postman's
// and Bruno's importers read), the variables a person sets (baseUrl, operatorToken)
// and those the run fills in, every customer and operator operation of the document
// with the document's method, path and auth, and a test script on every request that
// checks the status the document gives. Whether the run passes is
// collection-newman.test.ts; this file needs no server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import type { OpenApiDocument } from "../../src/openapi/document.ts";
import { COLLECTION_WORKING_DIR, POSTMAN_SCHEMA } from "../../src/openapi/postman.ts";

const read = (p: string) => JSON.parse(readFileSync(new URL(`../../${p}`, import.meta.url), "utf8"));
const collection = read("docs/pixeldrop.postman_collection.json");
const doc = read("docs/openapi.json") as OpenApiDocument;

// The parts of the v2.1 schema (schema.getpostman.com, collection v2.1.0) we use.
const KeyValue = z.object({ key: z.string(), value: z.string() }).loose();
const Url = z.object({
  raw: z.string(),
  host: z.array(z.string()),
  path: z.array(z.string()),
  variable: z.array(z.object({ key: z.string(), value: z.string() }).loose()).optional(),
  query: z.array(KeyValue).optional(),
});
const Auth = z.discriminatedUnion("type", [
  z.object({ type: z.literal("noauth") }),
  z.object({ type: z.literal("bearer"), bearer: z.array(z.object({ key: z.literal("token"), value: z.string(), type: z.string() })) }),
]);
const Body = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("raw"), raw: z.string(), options: z.object({ raw: z.object({ language: z.literal("json") }) }) }),
  z.object({
    mode: z.literal("formdata"),
    formdata: z.array(
      z.union([
        z.object({ key: z.string(), type: z.literal("text"), value: z.string() }).loose(),
        z.object({ key: z.string(), type: z.literal("file"), src: z.union([z.string(), z.null(), z.array(z.string())]) }).loose(),
      ]),
    ),
  }),
]);
const Request = z.object({
  method: z.enum(["GET", "PUT", "POST", "PATCH", "DELETE"]),
  header: z.array(KeyValue),
  url: Url,
  auth: Auth,
  description: z.string(),
  body: Body.optional(),
});
const Event = z.object({ listen: z.enum(["test", "prerequest"]), script: z.object({ type: z.literal("text/javascript"), exec: z.array(z.string()) }) });
const RequestItem = z.object({ name: z.string().min(1), request: Request, event: z.array(Event), response: z.array(z.unknown()) });
const Collection = z.object({
  info: z.object({ name: z.string(), description: z.string(), schema: z.literal(POSTMAN_SCHEMA) }),
  item: z.array(z.object({ name: z.string(), description: z.string().optional(), item: z.array(RequestItem).min(1) })),
  variable: z.array(z.object({ key: z.string(), value: z.string(), type: z.literal("string") }).loose()),
});

type Item = z.infer<typeof RequestItem>;
const items = (): Item[] => Collection.parse(collection).item.flatMap((f) => f.item);
const script = (i: Item) => i.event.filter((e) => e.listen === "test").flatMap((e) => e.script.exec).join("\n");
const postmanPath = (path: string) => `{{baseUrl}}/${path.slice(1).replace(/\{([^}]+)\}/g, ":$1")}`;
/** A request's address without its query. */
const pathOf = (i: { request: { url: { raw: string } } }) => i.request.url.raw.split("?")[0]!;

test("has the v2.1 shape", () => {
  const r = Collection.safeParse(collection);
  assert.ok(r.success, r.success ? "" : z.prettifyError(r.error));
  assert.equal(collection.info.schema, "https://schema.getpostman.com/json/collection/v2.1.0/collection.json");
});

test("a person sets baseUrl and operatorToken; every other variable starts empty and a script fills it", () => {
  const vars = new Map<string, string>(collection.variable.map((v: { key: string; value: string }) => [v.key, v.value]));
  assert.match(vars.get("baseUrl") ?? "", /^http:\/\/[^/]+$/);
  assert.equal(vars.get("operatorToken"), "", "no secret in the published file");
  const scripts = items().map(script).join("\n");
  for (const [key, value] of vars) {
    if (key === "baseUrl" || key === "operatorToken") continue;
    assert.equal(value, "", `${key} starts empty`);
    assert.ok(scripts.includes(`pm.collectionVariables.set("${key}"`), `a script sets ${key}`);
  }
  // Every {{name}} used anywhere is declared, or one of the runners' own ({{$guid}}).
  const used = new Set([...JSON.stringify(collection.item).matchAll(/\{\{([^}]+)\}\}/g)].map((m) => m[1]!));
  for (const name of used) assert.ok(vars.has(name) || name === "$guid", `{{${name}}} is declared`);
  // A variable is set before the first request that uses it.
  const set = new Set(["baseUrl", "operatorToken", "$guid"]);
  for (const i of items()) {
    for (const m of JSON.stringify(i.request).matchAll(/\{\{([^}]+)\}\}/g)) assert.ok(set.has(m[1]!), `${i.name} uses {{${m[1]}}} before a script sets it`);
    for (const m of script(i).matchAll(/pm\.collectionVariables\.set\("([^"]+)"/g)) set.add(m[1]!);
  }
});

test("every customer and operator operation is there, with the document's method, path and auth", () => {
  const documented: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const requests = items().filter((i) => i.request.method === method.toUpperCase() && pathOf(i) === postmanPath(path));
      if (op["x-internal"] === true) {
        assert.equal(requests.length, 0, `${path}: between our own processes, not in the collection`);
        continue;
      }
      documented.push(`${method.toUpperCase()} ${postmanPath(path)}`);
      assert.ok(requests.length > 0, `${method} ${path} has a request`);
      const security = (op.security as Record<string, unknown>[]).flatMap((s) => Object.keys(s));
      const params = ((op.parameters ?? []) as { in: string; name: string }[]).filter((p) => p.in === "path").map((p) => p.name);
      for (const req of requests) {
        const apiKeyHeader = req.request.header.find((h) => h.key === "X-Api-Key");
        if (security.includes("apiKey")) assert.match(apiKeyHeader?.value ?? "", /^\{\{(testKey|liveKey)\}\}$/, `${req.name}: X-Api-Key`);
        else assert.equal(apiKeyHeader, undefined, `${req.name}: no X-Api-Key`);
        if (security.includes("operatorToken")) {
          assert.deepEqual(req.request.auth, { type: "bearer", bearer: [{ key: "token", value: "{{operatorToken}}", type: "string" }] });
        } else {
          assert.equal(req.request.auth.type, "noauth");
        }
        assert.deepEqual((req.request.url.variable ?? []).map((v) => v.key), params, `${req.name}: path variables`);
        for (const v of req.request.url.variable ?? []) assert.match(v.value, /^\{\{[A-Za-z]+\}\}$/, `${req.name}: :${v.key} is filled from a variable`);
        assert.equal(Boolean(req.request.body), Boolean(op.requestBody), `${req.name}: body`);
        const required = ((op.parameters ?? []) as { in: string; name: string; required?: boolean }[]).filter((p) => p.in === "query" && p.required).map((p) => p.name);
        const sent = (req.request.url.query ?? []).filter((q) => q.value !== "").map((q) => q.key);
        assert.deepEqual(sent.filter((k) => required.includes(k)), required, `${req.name}: the required query parameters, with values`);
      }
    }
  }
  const inCollection = new Set(items().map((i) => `${i.request.method} ${pathOf(i)}`));
  assert.deepEqual([...inCollection].sort(), [...new Set(documented)].sort());
});

test("every request checks a status the document gives for it, and the request ID", () => {
  for (const i of items()) {
    const path = Object.keys(doc.paths).find((p) => postmanPath(p) === pathOf(i))!;
    const op = doc.paths[path]![i.request.method.toLowerCase()]!;
    const statuses = [...script(i).matchAll(/pm\.expect\(pm\.response\.code, .*\)\.to\.eql\((\d{3})\);/g)].map((m) => m[1]!);
    assert.equal(statuses.length, 1, `${i.name}: one status check`);
    assert.ok(statuses[0]! in (op.responses as Record<string, unknown>), `${i.name}: ${statuses[0]} is documented`);
    assert.match(script(i), /pm\.response\.headers\.get\("x-pd-request-id"\)/, `${i.name}: checks X-PD-Request-Id`);
  }
});

test("the cut-outs are ready to send: the shipped image as a file part, size=preview on", () => {
  const cutOuts = items().filter((i) => i.request.url.raw === "{{baseUrl}}/v1.0/removebg");
  assert.deepEqual(cutOuts.map((i) => i.request.header.find((h) => h.key === "X-Api-Key")?.value).sort(), ["{{liveKey}}", "{{testKey}}"]);
  for (const rb of cutOuts) {
    assert.ok(rb.request.body?.mode === "formdata");
    const parts = rb.request.body.formdata as { key: string; type: string; value?: string; src?: string; disabled?: boolean }[];
    const file = parts.find((p) => p.key === "image_file");
    assert.equal(file?.type, "file");
    assert.equal(typeof file?.src, "string");
    // Resolved from the documented working directory, as newman --working-dir and Postman's setting do.
    assert.ok(existsSync(new URL(`../../${COLLECTION_WORKING_DIR}/${file!.src}`, import.meta.url)), `${file!.src} ships in ${COLLECTION_WORKING_DIR}/`);
    const size = parts.find((p) => p.key === "size");
    assert.equal(size?.value, "preview");
    assert.notEqual(size?.disabled, true);
    assert.ok(!parts.some((p) => ["image_url", "image_file_b64", "crop_margin"].includes(p.key)), "unsupported parts are not offered");
    assert.match(script(rb), /x-pd-charged-krw/, `${rb.name}: checks X-PD-Charged-KRW`);
    assert.match(script(rb), /x-pd-balance-krw/, `${rb.name}: checks X-PD-Balance-KRW`);
  }
});
