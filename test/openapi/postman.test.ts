// The committed Postman collection: the v2.1 format's required shape (what Postman's
// and Bruno's importers read), the three variables, and exactly one request per
// documented operation, with the auth the document asks for.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { OpenApiDocument } from "../../src/openapi/document.ts";
import { POSTMAN_SCHEMA } from "../../src/openapi/postman.ts";

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
const RequestItem = z.object({ name: z.string().min(1), request: Request, response: z.array(z.unknown()) });
const Collection = z.object({
  info: z.object({ name: z.string(), description: z.string(), schema: z.literal(POSTMAN_SCHEMA) }),
  item: z.array(z.object({ name: z.string(), item: z.array(RequestItem).min(1) })),
  variable: z.array(z.object({ key: z.string(), value: z.string(), type: z.literal("string") })),
});

type Item = z.infer<typeof RequestItem>;
const items = (): Item[] => Collection.parse(collection).item.flatMap((f) => f.item);

test("has the v2.1 shape", () => {
  const r = Collection.safeParse(collection);
  assert.ok(r.success, r.success ? "" : z.prettifyError(r.error));
  assert.equal(collection.info.schema, "https://schema.getpostman.com/json/collection/v2.1.0/collection.json");
});

test("declares baseUrl, apiKey and operatorToken, with no secret filled in", () => {
  const vars = Object.fromEntries(collection.variable.map((v: { key: string; value: string }) => [v.key, v.value]));
  assert.deepEqual(Object.keys(vars).sort(), ["apiKey", "baseUrl", "operatorToken"]);
  assert.equal(vars.apiKey, "");
  assert.equal(vars.operatorToken, "");
  assert.match(vars.baseUrl, /^http:\/\//);
});

test("one request per documented operation, with the document's method, path and auth", () => {
  const documented: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      documented.push(`${method.toUpperCase()} /${path.split("/").filter(Boolean).map((s) => s.replace(/^\{(.+)\}$/, ":$1")).join("/")}`);
      const req = items().find((i) => i.request.method === method.toUpperCase() && i.request.url.raw === `{{baseUrl}}/${path.slice(1).replace(/\{([^}]+)\}/g, ":$1")}`);
      assert.ok(req, `${method} ${path} has a request`);
      const security = (op.security as Record<string, unknown>[]).flatMap((s) => Object.keys(s));
      const apiKeyHeader = req.request.header.find((h) => h.key === "X-Api-Key");
      assert.equal(apiKeyHeader?.value, security.includes("apiKey") ? "{{apiKey}}" : undefined, `${path}: X-Api-Key`);
      if (security.includes("operatorToken")) {
        assert.deepEqual(req.request.auth, { type: "bearer", bearer: [{ key: "token", value: "{{operatorToken}}", type: "string" }] });
      } else {
        assert.equal(req.request.auth.type, "noauth");
      }
      const params = ((op.parameters ?? []) as { in: string; name: string }[]).filter((p) => p.in === "path").map((p) => p.name);
      assert.deepEqual((req.request.url.variable ?? []).map((v) => v.key), params, `${path}: path variables`);
      assert.equal(Boolean(req.request.body), Boolean(op.requestBody), `${path}: body`);
    }
  }
  const inCollection = items().map((i) => `${i.request.method} ${i.request.url.raw.replace("{{baseUrl}}", "")}`);
  assert.deepEqual([...inCollection].sort(), [...documented].sort());
});

test("removebg is ready to send: image_file as a file part, size=preview on", () => {
  const rb = items().find((i) => i.request.url.raw === "{{baseUrl}}/v1.0/removebg")!;
  assert.ok(rb.request.body?.mode === "formdata");
  const parts = rb.request.body.formdata as { key: string; type: string; value?: string; disabled?: boolean }[];
  assert.equal(parts.find((p) => p.key === "image_file")?.type, "file");
  const size = parts.find((p) => p.key === "size");
  assert.equal(size?.value, "preview");
  assert.notEqual(size?.disabled, true);
  assert.ok(!parts.some((p) => ["image_url", "image_file_b64", "crop_margin"].includes(p.key)), "unsupported parts are not offered");
});
