// A Postman collection (format v2.1, which Bruno and Insomnia import too) built from
// the OpenAPI document, so it has exactly one request per documented operation.
// Secrets stay variables: {{baseUrl}}, {{apiKey}}, {{operatorToken}}.
import type { OpenApiDocument } from "./document.ts";

export const POSTMAN_SCHEMA = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json";

type Json = Record<string, unknown>;

interface PostmanRequestItem {
  name: string;
  request: Json;
  response: [];
}

/** A sample value for a multipart text part: the schema's default, first listed value or first example. */
function sampleOf(schema: Json): string | undefined {
  if (typeof schema.default === "string") return schema.default;
  if (Array.isArray(schema.enum) && typeof schema.enum[0] === "string") return schema.enum[0];
  if (Array.isArray(schema.examples) && typeof schema.examples[0] === "string") return schema.examples[0];
  return undefined;
}

function resolve(doc: OpenApiDocument, schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  const name = ref.replace("#/components/schemas/", "");
  return ((doc.components as Json).schemas as Record<string, Json>)[name]!;
}

function bodyOf(doc: OpenApiDocument, op: Json): { body?: Json; header: Json[] } {
  const rb = op.requestBody as { content: Record<string, Json> } | undefined;
  if (!rb) return { header: [] };
  const [mediaType, media] = Object.entries(rb.content)[0]!;
  if (mediaType === "multipart/form-data") {
    const form = resolve(doc, media.schema as Json);
    const props = (form.properties ?? {}) as Record<string, Json>;
    const formdata: Json[] = [];
    for (const [key, p] of Object.entries(props)) {
      if ("not" in p) continue; // documented as rejected: not offered in the request
      if (p.contentMediaType) formdata.push({ key, type: "file", src: [], description: String(p.description ?? "") });
      else {
        const value = key === "size" ? "preview" : sampleOf(p);
        if (value !== undefined) formdata.push({ key, value, type: "text", disabled: key !== "size", description: String(p.description ?? "") });
      }
    }
    return { body: { mode: "formdata", formdata }, header: [] };
  }
  const example = media.example ?? {};
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

function itemOf(doc: OpenApiDocument, path: string, method: string, op: Json): PostmanRequestItem {
  // Postman marks path variables with ":name".
  const segments = path.split("/").filter(Boolean).map((s) => s.replace(/^\{(.+)\}$/, ":$1"));
  const pathParams = ((op.parameters as Json[] | undefined) ?? []).filter((p) => p.in === "path");
  const { body, header } = bodyOf(doc, op);
  const sec = (op.security as Json[] | undefined) ?? [];
  // The public key travels as a plain header: every importer understands that.
  if (sec.some((s) => "apiKey" in s)) header.unshift({ key: "X-Api-Key", value: "{{apiKey}}" });
  // Optional request headers (Idempotency-Key) come switched off; {{$guid}} is a new UUID per send.
  for (const p of ((op.parameters as Json[] | undefined) ?? []).filter((p) => p.in === "header")) {
    header.push({ key: String(p.name), value: "{{$guid}}", description: String(p.description ?? ""), ...(p.required ? {} : { disabled: true }) });
  }
  const request: Json = {
    method: method.toUpperCase(),
    header,
    url: {
      raw: `{{baseUrl}}/${segments.join("/")}`,
      host: ["{{baseUrl}}"],
      path: segments,
      ...(pathParams.length ? { variable: pathParams.map((p) => ({ key: p.name, value: "", description: p.description })) } : {}),
    },
    auth: authOf(op),
    description: [op.summary, op.description].filter(Boolean).join("\n\n"),
  };
  if (body) request.body = body;
  return { name: String(op.summary), request, response: [] };
}

export function buildPostmanCollection(doc: OpenApiDocument): Json {
  const info = doc.info as { title: string; version: string; description: string };
  const folders = new Map<string, PostmanRequestItem[]>();
  for (const t of (doc.tags as { name: string }[]) ?? []) folders.set(t.name, []);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = ((op.tags as string[]) ?? ["Other"])[0]!;
      if (!folders.has(tag)) folders.set(tag, []);
      folders.get(tag)!.push(itemOf(doc, path, method, op));
    }
  }
  return {
    info: {
      name: `${info.title} ${info.version}`,
      description: `${info.description}\n\nGenerated from the OpenAPI document by \`npm run build:docs\`.`,
      schema: POSTMAN_SCHEMA,
    },
    item: [...folders].filter(([, items]) => items.length > 0).map(([name, items]) => ({ name, item: items })),
    variable: [
      { key: "baseUrl", value: "http://localhost:8080", type: "string" },
      { key: "apiKey", value: "", type: "string" },
      { key: "operatorToken", value: "", type: "string" },
    ],
  };
}
