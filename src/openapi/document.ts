// Builds the OpenAPI 3.1 document from the route registry. Deterministic: the same
// registry gives the same bytes (keys in insertion order, operations in registry
// order, errors sorted by status), so docs/openapi.json diffs stay small.
import { z } from "zod";
import { ERRORS } from "../http/error-catalogue.ts";
import { H } from "../http/headers.ts";
import { HEADER_DOCS, headerComponentName, type HeaderName } from "./headers.ts";
import { openApiPath, type Body, type ErrorDoc, type JsonSchema, type Operation, type Tag } from "./model.ts";
import { API_INFO, OPERATIONS } from "./operations.ts";
import { ErrorEnvelope } from "./schemas.ts";

export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, Record<string, Record<string, unknown>>>;
};

const TAGS: Record<Tag, string> = {
  "Background removal": "The paid call. X-Api-Key with a test or live key.",
  Account: "What a key's organization has left.",
  Health: "Liveness and readiness for orchestrators; metrics for the operator.",
  Operator: "Operator API under /admin/v1: Authorization: Bearer <OPERATOR_TOKEN>.",
  Internal: "Between Pixeldrop processes of a split deployment; not for customers.",
  "Interface description": "This document and its HTML rendering.",
};

/** Codes whose answers can carry Retry-After: the 429s and 503s, and 409 idempotency_key_in_use. */
const retryable = (status: number) => status === 409 || status === 429 || status === 503;

function toJsonSchema(schema: Body["schema"], io: "input" | "output"): JsonSchema {
  if (!(schema instanceof z.ZodType)) return schema;
  const out = z.toJSONSchema(schema, { target: "draft-2020-12", io }) as JsonSchema;
  // OpenAPI 3.1's default dialect is a superset of 2020-12; the marker is noise here.
  delete out.$schema;
  return out;
}

export function buildOpenApiDocument(operations: readonly Operation[] = OPERATIONS): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {
    ErrorEnvelope: toJsonSchema(ErrorEnvelope, "output"),
  };
  const usedHeaders = new Set<HeaderName>();

  /** A named body goes to components.schemas once; a clash of names is a bug in the registry. */
  const schemaRef = (b: Body, io: "input" | "output"): JsonSchema => {
    const s = toJsonSchema(b.schema, io);
    if (!b.name) return s;
    const existing = schemas[b.name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(s)) throw new Error(`two different schemas named ${b.name}`);
    schemas[b.name] = s;
    return { $ref: `#/components/schemas/${b.name}` };
  };
  const content = (bodies: Body[], io: "input" | "output") =>
    Object.fromEntries(
      bodies.map((b) => [
        b.mediaType,
        { schema: schemaRef(b, io), ...(b.example === undefined ? {} : { example: b.example }) },
      ]),
    );
  const headers = (names: readonly HeaderName[]) =>
    Object.fromEntries(
      names.map((n) => {
        usedHeaders.add(n);
        return [n, { $ref: `#/components/headers/${headerComponentName(n)}` }];
      }),
    );

  const paths: OpenApiDocument["paths"] = {};
  for (const op of operations) {
    const path = openApiPath(op.path);
    const item = (paths[path] ??= {});
    if (item[op.method]) throw new Error(`${op.method.toUpperCase()} ${path} documented twice`);
    item[op.method] = operationObject(op, content, headers);
  }

  return {
    openapi: "3.1.0",
    info: { title: API_INFO.title, version: API_INFO.version, description: API_INFO.description },
    servers: [{ url: "/", description: "The server that serves this document" }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-Api-Key", description: "The app's test (`pd_test_…`) or live (`pd_live_…`) key." },
        operatorToken: { type: "http", scheme: "bearer", description: "The OPERATOR_TOKEN of the deployment." },
      },
      schemas,
      headers: Object.fromEntries(
        [...usedHeaders].sort().map((n) => {
          const d: { description: string; schema: JsonSchema; required?: true } = HEADER_DOCS[n];
          return [headerComponentName(n), { description: d.description, ...(d.required ? { required: true } : {}), schema: d.schema }];
        }),
      ),
    },
  };
}

function operationObject(
  op: Operation,
  content: (b: Body[], io: "input" | "output") => Record<string, unknown>,
  headers: (names: readonly HeaderName[]) => Record<string, unknown>,
): Record<string, unknown> {
  const parameters = [
    ...(op.pathParams ?? []).map((p) => ({ name: p.name, in: "path", required: true, description: p.description, schema: { type: "string" } })),
    ...(op.queryParams ?? []).map((p) => ({
      name: p.name,
      in: "query",
      required: p.required ?? false,
      description: p.description,
      schema: p.schema,
      ...(p.example === undefined ? {} : { example: p.example }),
    })),
    ...(op.headerParams ?? []).map((p) => ({ name: p.name, in: "header", required: p.required ?? false, description: p.description, schema: p.schema })),
  ];
  const responses: Record<string, unknown> = {
    [String(op.success.status)]: {
      description: op.success.description,
      headers: headers(op.success.headers ?? [H.requestId]),
      ...(op.success.contents ? { content: content(op.success.contents, "output") } : {}),
    },
  };
  for (const r of op.otherResponses ?? []) {
    responses[String(r.status)] = {
      description: r.description,
      headers: headers([H.requestId]),
      ...(r.contents ? { content: content(r.contents, "output") } : {}),
    };
  }
  for (const [status, errs] of groupByStatus(op.errors)) {
    const extra = (op.errorHeaders ?? []).filter((h) => {
      if (h === "Retry-After") return retryable(status);
      if (h === "WWW-Authenticate") return errs.some((e) => e.code === "unauthorized");
      return true;
    });
    responses[String(status)] = {
      description: errs.map((e) => `\`${e.code}\``).join(", "),
      headers: headers([H.requestId, ...extra]),
      content: {
        "application/json": {
          schema: {
            allOf: [
              { $ref: "#/components/schemas/ErrorEnvelope" },
              { properties: { errors: { items: { properties: { code: { enum: errs.map((e) => e.code) } } } } } },
            ],
          },
          examples: Object.fromEntries(
            errs.map((e) => [e.code, { summary: e.when, value: { errors: [{ title: ERRORS[e.code].title, code: e.code }] } }]),
          ),
        },
      },
    };
  }
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.internal ? { "x-internal": true } : {}),
    security: op.security === "none" ? [] : [{ [op.security]: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(op.requestBody
      ? {
          requestBody: {
            required: op.requestBody.required,
            content: withEncoding(content(op.requestBody.contents, "input"), op.requestBody.encoding),
          },
        }
      : {}),
    responses,
  };
}

function withEncoding(c: Record<string, unknown>, encoding: Record<string, { contentType: string }> | undefined) {
  if (!encoding) return c;
  const mp = c["multipart/form-data"] as Record<string, unknown> | undefined;
  if (mp) mp.encoding = encoding;
  return c;
}

/** Errors by HTTP status (from the catalogue), statuses ascending, registry order within one. */
function groupByStatus(errors: readonly ErrorDoc[]): [number, ErrorDoc[]][] {
  const by = new Map<number, ErrorDoc[]>();
  for (const e of errors) {
    const s = ERRORS[e.code].status;
    const list = by.get(s) ?? [];
    if (list.some((x) => x.code === e.code)) throw new Error(`error ${e.code} documented twice for one operation`);
    list.push(e);
    by.set(s, list);
  }
  return [...by.entries()].sort((a, b) => a[0] - b[0]);
}

/** The committed form: two-space JSON with a final newline. */
export function serialiseDocument(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
