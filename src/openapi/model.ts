// The shape of one documented operation. The route registry (operations-*.ts) fills
// these in from the real sources (admin zod schemas, parameter constants, the error
// catalogue, header names); document.ts, postman.ts and the reference page are all
// built from the same list, so the three cannot disagree with each other.
import type { z } from "zod";
import type { ErrorCode } from "../http/error-catalogue.ts";
import type { HeaderName } from "./headers.ts";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses) written out by hand. */
export type JsonSchema = Record<string, unknown>;

export type Tag = "Background removal" | "Account" | "Health" | "Operator" | "Internal" | "Interface description";

/** Who may call: the app's X-Api-Key, the operator's bearer token, or anyone. */
export type Security = "apiKey" | "operatorToken" | "none";

export interface ErrorDoc {
  code: ErrorCode;
  /** When this answer is given (the status comes from the error catalogue). */
  when: string;
}

export interface Body {
  mediaType: string;
  /** A zod schema (converted with z.toJSONSchema) or a JSON Schema written here. */
  schema: z.ZodType | JsonSchema;
  /** Name of the component schema the body is published under. */
  name?: string;
  example?: unknown;
  description?: string;
}

export interface Operation {
  operationId: string;
  method: Method;
  /** Hono-style path (":param"), exactly as the app registers it. */
  path: string;
  tag: Tag;
  summary: string;
  description?: string;
  security: Security;
  /** Served only to other Pixeldrop processes (split deployment), not to customers. */
  internal?: boolean;
  pathParams?: { name: string; description: string }[];
  /** Query parameters (operations that take none refuse any: see the handlers). */
  queryParams?: { name: string; description: string; schema: JsonSchema; required?: boolean; example?: string }[];
  /** Request headers other than the security scheme's. */
  headerParams?: { name: string; description: string; schema: JsonSchema; required?: boolean }[];
  requestBody?: { required: boolean; contents: Body[]; encoding?: Record<string, { contentType: string }> };
  success: {
    status: number;
    description: string;
    contents?: Body[];
    headers?: HeaderName[];
  };
  /** Other non-error answers (e.g. /readyz's 503 "not ready" body). */
  otherResponses?: { status: number; description: string; contents?: Body[] }[];
  errors: ErrorDoc[];
  /** Headers that travel on this operation's error answers besides X-PD-Request-Id. */
  errorHeaders?: HeaderName[];
}

/** "/orgs/:orgId" → "/orgs/{orgId}" (OpenAPI path templating). */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

/** "/orgs/{orgId}" → "/orgs/:orgId". */
export function honoPath(openApiPathText: string): string {
  return openApiPathText.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1");
}
