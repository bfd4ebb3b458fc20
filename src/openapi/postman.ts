// A Postman collection (format v2.1, which Bruno and Insomnia import too) built from
// the OpenAPI document and the tour in postman-tour.ts: every customer and operator
// operation of the document, in an order that runs top to bottom on a fresh service.
// Method, path, auth, parameters, the body's form and the status each request checks
// come from the document; the tour adds the order, the variables carried from one
// answer to the next and the checks beyond status. Secrets stay variables:
// {{operatorToken}} is set by the person running it, key texts by the run itself.
import type { OpenApiDocument } from "./document.ts";
import { check, header, js } from "./postman-script.ts";
import { RUN_VARIABLES, SAMPLE_IMAGE, TOUR, USER_VARIABLES, type TourStep } from "./postman-tour.ts";

export const POSTMAN_SCHEMA = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json";

/** The folder a runner must read files from (the sample image): the collection's own. */
export const COLLECTION_WORKING_DIR = "docs";

type Json = Record<string, unknown>;

interface PostmanRequestItem {
  name: string;
  request: Json;
  event: { listen: "test"; script: { type: "text/javascript"; exec: string[] } }[];
  response: [];
}

interface DocOperation {
  path: string;
  method: string;
  op: Json;
}

/** A sample value for a multipart text part: the schema's default, first listed value or first example. */
function sampleOf(schema: Json): string | undefined {
  if (typeof schema.default === "string") return schema.default;
  if (Array.isArray(schema.enum) && typeof schema.enum[0] === "string") return schema.enum[0];
  if (Array.isArray(schema.examples) && typeof schema.examples[0] === "string") return schema.examples[0];
  return undefined;
}

function resolve(doc: OpenApiDocument, schema: Json, kind: "schemas" | "headers" = "schemas"): Json {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  const name = ref.replace(`#/components/${kind}/`, "");
  return ((doc.components as Json)[kind] as Record<string, Json>)[name]!;
}

function bodyOf(doc: OpenApiDocument, op: Json, step: TourStep): { body?: Json; header: Json[] } {
  const rb = op.requestBody as { content: Record<string, Json> } | undefined;
  if (!rb) return { header: [] };
  const [mediaType, media] = Object.entries(rb.content)[0]!;
  if (mediaType === "multipart/form-data") {
    const form = resolve(doc, media.schema as Json);
    const props = (form.properties ?? {}) as Record<string, Json>;
    const formdata: Json[] = [];
    for (const [key, p] of Object.entries(props)) {
      if ("not" in p) continue; // documented as rejected: not offered in the request
      // The sample image, relative to the runner's working directory.
      if (p.contentMediaType) formdata.push({ key, type: "file", src: SAMPLE_IMAGE, description: String(p.description ?? "") });
      else {
        // preview: the cheaper tier, and the size a test key gets anyway.
        const value = key === "size" ? "preview" : sampleOf(p);
        if (value !== undefined) formdata.push({ key, value, type: "text", disabled: key !== "size", description: String(p.description ?? "") });
      }
    }
    return { body: { mode: "formdata", formdata }, header: [] };
  }
  const example = step.body ?? media.example ?? {};
  return {
    body: { mode: "raw", raw: JSON.stringify(example, null, 2), options: { raw: { language: "json" } } },
    header: [{ key: "Content-Type", value: mediaType }],
  };
}

function authOf(op: Json): Json {
  const sec = (op.security as Json[] | undefined) ?? [];
  if (sec.some((s) => "operatorToken" in s)) return { type: "bearer", bearer: [{ key: "token", value: "{{operatorToken}}", type: "string" }] };
  return { type: "noauth" };
}

/** The status the step expects and that answer's documentation, both from the document. */
function expectedAnswer(d: DocOperation, step: TourStep): { status: number; response: Json } {
  const responses = d.op.responses as Record<string, Json>;
  const where = `${step.operationId} (${d.method.toUpperCase()} ${d.path})`;
  if (!step.expectError) {
    const status = Object.keys(responses).find((s) => /^2\d\d$/.test(s));
    if (!status) throw new Error(`${where} documents no success answer`);
    return { status: Number(status), response: responses[status]! };
  }
  for (const [status, response] of Object.entries(responses)) {
    const examples = ((response.content as Record<string, Json> | undefined)?.["application/json"]?.examples ?? {}) as Json;
    if (step.expectError in examples) return { status: Number(status), response };
  }
  throw new Error(`${where} does not document the error ${step.expectError}`);
}

/** The checks every request gets from the document: status, request ID, content type, required headers. */
function documentedChecks(doc: OpenApiDocument, d: DocOperation, step: TourStep, body: unknown): string[] {
  const { status, response } = expectedAnswer(d, step);
  // On a wrong status the message shows what came back instead, and what that most likely means.
  const why = `${js(`${d.method.toUpperCase()} ${d.path} answered `)} + pm.response.code + ": " + pm.response.text().slice(0, 300)${step.hint ? ` + ${js(` (${step.hint})`)}` : ""}`;
  const lines = check(`status ${status}${step.expectError ? ` ${step.expectError}` : ""}`, [`pm.expect(pm.response.code, ${why}).to.eql(${status});`]);
  const headers = (response.headers ?? {}) as Record<string, Json>;
  for (const [name, h] of Object.entries(headers)) {
    const resolved = { ...resolve(doc, h, "headers"), ...h };
    const pattern = (resolved.schema as Json | undefined)?.pattern;
    // The request ID is on every answer; other headers the document marks required are checked too.
    if (name !== "X-PD-Request-Id" && resolved.required !== true) continue;
    lines.push(
      ...check(`${name}${typeof pattern === "string" ? " well formed" : " present"}`, [
        typeof pattern === "string" ? `pm.expect(${header(name)}).to.match(new RegExp(${js(pattern)}));` : `pm.expect(${header(name)}).to.be.ok;`,
      ]),
    );
  }
  const types = Object.keys((response.content ?? {}) as Json);
  if (types.length > 0) {
    lines.push(
      ...check(`Content-Type ${types.join(" or ")}`, [
        `var type = String(${header("Content-Type")}).split(";")[0].trim().toLowerCase();`,
        `pm.expect(${js(types)}).to.include(type);`,
      ]),
    );
  }
  if (step.expectError) lines.push(...check(`error code ${step.expectError}`, [`pm.expect(pm.response.json().errors[0].code).to.eql(${js(step.expectError)});`]));
  if (step.test) lines.push(...step.test(body));
  return lines;
}

function itemOf(doc: OpenApiDocument, d: DocOperation, step: TourStep): PostmanRequestItem {
  const { path, method, op } = d;
  // Postman marks path variables with ":name"; their values are collection variables.
  const segments = path.split("/").filter(Boolean).map((s) => s.replace(/^\{(.+)\}$/, ":$1"));
  const pathParams = ((op.parameters as Json[] | undefined) ?? []).filter((p) => p.in === "path");
  const query = ((op.parameters as Json[] | undefined) ?? [])
    .filter((p) => p.in === "query")
    .map((p) => ({ key: String(p.name), value: step.query?.[String(p.name)] ?? String(p.example ?? ""), description: String(p.description ?? "") }));
  const { body, header: headers } = bodyOf(doc, op, step);
  const sec = (op.security as Json[] | undefined) ?? [];
  // The public key travels as a plain header: every importer understands that.
  if (sec.some((s) => "apiKey" in s)) {
    if (!step.key) throw new Error(`${step.operationId}: the tour must say which key (testKey or liveKey) it sends`);
    headers.unshift({ key: "X-Api-Key", value: `{{${step.key}}}` });
  }
  // Optional request headers (Idempotency-Key) come switched off; {{$guid}} is a new UUID per send.
  for (const p of ((op.parameters as Json[] | undefined) ?? []).filter((p) => p.in === "header")) {
    headers.push({ key: String(p.name), value: "{{$guid}}", description: String(p.description ?? ""), ...(p.required ? {} : { disabled: true }) });
  }
  const request: Json = {
    method: method.toUpperCase(),
    header: headers,
    url: {
      raw: `{{baseUrl}}/${segments.join("/")}${query.length ? `?${query.map((q) => `${q.key}=${q.value}`).join("&")}` : ""}`,
      host: ["{{baseUrl}}"],
      path: segments,
      ...(query.length ? { query } : {}),
      ...(pathParams.length
        ? { variable: pathParams.map((p) => ({ key: p.name, value: step.path?.[String(p.name)] ?? `{{${p.name}}}`, description: p.description })) }
        : {}),
    },
    auth: authOf(op),
    description: [op.summary, op.description].filter(Boolean).join("\n\n"),
  };
  if (body) request.body = body;
  const sent = body?.mode === "raw" ? JSON.parse(String(body.raw)) : undefined;
  return {
    name: step.name ?? String(op.summary),
    request,
    event: [{ listen: "test", script: { type: "text/javascript", exec: documentedChecks(doc, d, step, sent) } }],
    response: [],
  };
}

export function buildPostmanCollection(doc: OpenApiDocument): Json {
  const info = doc.info as { title: string; version: string; description: string };
  const byId = new Map<string, DocOperation>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) byId.set(String(op.operationId), { path, method, op });
  }
  const toured = new Set<string>();
  const folders = TOUR.map((f) => ({
    name: f.name,
    description: f.description,
    item: f.steps.map((step) => {
      const d = byId.get(step.operationId);
      if (!d) throw new Error(`the tour names ${step.operationId}, which the document does not have`);
      toured.add(step.operationId);
      return itemOf(doc, d, step);
    }),
  }));
  // Every operation a customer or an operator calls is in the tour; the gateways' internal one is not.
  const missing = [...byId].filter(([id, d]) => !toured.has(id) && d.op["x-internal"] !== true).map(([id]) => id);
  if (missing.length) throw new Error(`the tour leaves out ${missing.join(", ")}`);
  return {
    info: {
      name: `${info.title} ${info.version}`,
      description:
        `${info.description}\n\n` +
        "Runs top to bottom on a fresh service: set `baseUrl` and `operatorToken`, use the collection's folder " +
        `(docs/) as the working directory so \`${SAMPLE_IMAGE}\` is found, and run it. It creates an organization, ` +
        "credits it, creates an app and its keys, makes a test-key and a live-key cut-out, looks the paid request up, " +
        "reissues, suspends, lifts and deletes the live key, completes a refund and runs a reconciliation; every request checks its documented " +
        "status and headers. To send only the cut-outs with a key you have, set `testKey` or `liveKey`.\n\n" +
        "Generated from the OpenAPI document by `npm run build:docs`.",
      schema: POSTMAN_SCHEMA,
    },
    item: folders,
    variable: [
      ...USER_VARIABLES.map((v) => ({ key: v.key, value: v.value, type: "string", description: v.description })),
      ...Object.entries(RUN_VARIABLES).map(([key, description]) => ({ key, value: "", type: "string", description })),
    ],
  };
}
