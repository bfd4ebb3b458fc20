// The committed interface description: a valid OpenAPI 3.1 document, exactly what
// the generator produces now (so it cannot go stale), and exactly what the running
// app serves at /openapi.json; the HTML reference renders every operation.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { buildOpenApiDocument, serialiseDocument, type OpenApiDocument } from "../../src/openapi/document.ts";
import { OPERATIONS } from "../../src/openapi/operations.ts";
import { buildPostmanCollection } from "../../src/openapi/postman.ts";
import { z } from "zod";
import { makeHarness, type Harness } from "../support/harness.ts";

const ROOT = new URL("../../", import.meta.url);
const committed = (path: string) => readFileSync(new URL(path, ROOT), "utf8");
const STALE = "stale: run `npm run build:docs` and commit the result";

describe("docs/openapi.json", () => {
  test("validates as OpenAPI 3.1 and every $ref resolves", async () => {
    const validator = new Validator();
    const res = await validator.validate(JSON.parse(committed("docs/openapi.json")));
    assert.equal(res.valid, true, JSON.stringify(res.errors, null, 2));
    assert.equal(validator.version, "3.1");
    assert.doesNotThrow(() => validator.resolveRefs());
  });

  test("the validator rejects a broken document (the check above can fail)", async () => {
    const broken = JSON.parse(committed("docs/openapi.json"));
    broken.paths["/v1.0/removebg"].post.responses = { "200": { content: {} } }; // a response needs a description
    assert.equal((await new Validator().validate(broken)).valid, false);
  });

  test("equals what the generator produces now", () => {
    assert.equal(committed("docs/openapi.json"), serialiseDocument(buildOpenApiDocument()), STALE);
  });

  test("the Postman collection equals what the generator produces now", () => {
    assert.equal(committed("docs/pixeldrop.postman_collection.json"), serialiseDocument(buildPostmanCollection(buildOpenApiDocument())), STALE);
  });

  test("generation is deterministic", () => {
    assert.equal(serialiseDocument(buildOpenApiDocument()), serialiseDocument(buildOpenApiDocument()));
  });

  test("every request example is valid for the schema the handler validates with", () => {
    let checked = 0;
    for (const op of OPERATIONS) {
      for (const b of op.requestBody?.contents ?? []) {
        if (b.example === undefined || !(b.schema instanceof z.ZodType)) continue;
        const r = b.schema.safeParse(b.example);
        assert.ok(r.success, `${op.operationId}: ${r.success ? "" : z.prettifyError(r.error)}`);
        checked++;
      }
    }
    assert.ok(checked >= 8, `${checked} examples checked`);
  });

  test("covers the spec's response headers and the removebg form parts", () => {
    const doc = buildOpenApiDocument();
    const op = doc.paths["/v1.0/removebg"]!.post as any;
    const okHeaders = Object.keys(op.responses["200"].headers);
    for (const h of [
      "X-PD-Request-Id", "X-PD-Charged-KRW", "X-PD-Balance-KRW", "X-PD-Test-Size", "X-PD-Test-Remaining",
      "X-Width", "X-Height", "X-Processing-Ms", "X-Foreground-Top", "X-Foreground-Left", "X-Foreground-Width", "X-Foreground-Height",
    ]) {
      assert.ok(okHeaders.includes(h), `${h} on the 200 answer`);
    }
    assert.ok(Object.keys(op.responses["429"].headers).includes("Retry-After"));
    assert.ok(Object.keys(op.responses["503"].headers).includes("Retry-After"));
    const form = (doc.components as any).schemas.RemoveBgForm;
    for (const part of ["image_file", "size", "type", "format", "semitransparency", "crop", "crop_margin", "image_url", "image_file_b64"]) {
      assert.ok(form.properties[part], `form part ${part}`);
    }
    assert.deepEqual(form.required, ["image_file"]);
    assert.deepEqual(Object.keys((doc.components as any).securitySchemes).sort(), ["apiKey", "operatorToken"]);
  });
});

describe("served by the app", () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness({ embedded: true });
  });
  after(() => h.close());

  test("GET /openapi.json: 200 application/json, the committed document", async () => {
    const res = await h.app.request("/openapi.json");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.match(res.headers.get("x-pd-request-id") ?? "", /^req_/);
    assert.equal(await res.text(), committed("docs/openapi.json"));
  });

  test("GET /docs/api: 200 self-contained HTML listing every operation and error code", async () => {
    const res = await h.app.request("/docs/api");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    const html = await res.text();
    assert.match(html, /^<!doctype html>/i);
    // Self-contained: nothing loaded from elsewhere.
    assert.doesNotMatch(html, /<script|<link|src="http|href="http/i);
    const doc = JSON.parse(committed("docs/openapi.json")) as OpenApiDocument;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        assert.ok(html.includes(`id="${op.operationId}"`), `${method} ${path} has a section`);
        assert.ok(html.includes(path.replace(/&/g, "&amp;")), `${path} shown`);
        for (const r of Object.values(op.responses as Record<string, any>)) {
          for (const code of Object.keys(r.content?.["application/json"]?.examples ?? {})) {
            assert.ok(html.includes(`<code>${code}</code>`), `${op.operationId}: ${code} in the error table`);
          }
        }
      }
    }
  });
});
