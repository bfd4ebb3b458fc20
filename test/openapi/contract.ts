// Checks one answer against the OpenAPI document it claims to follow, the way a
// third-party validator does: the status is listed for the operation, the media type is
// one the response lists, a JSON body validates against the published schema (JSON
// Schema 2020-12, through ajv), every header marked `required` is there, every header
// of ours that is there is documented for that response and matches its schema.
// Works on any document (the served one, or a doctored copy in the test that proves the
// checker fails), so nothing here knows our routes.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/**
 * Headers of ours: these must be documented wherever they appear (caching and transport
 * headers are not part of the contract, nor the browser-security headers every answer
 * carries, src/http/security-headers.ts and docs/SECURITY.md).
 */
export const OURS = /^(x-(?!content-type-options$|frame-options$)|retry-after$|idempotent-replayed$|www-authenticate$|allow$)/i;

/** The names (lower case) of an answer's headers of ours. */
export const ourHeaders = (res: Response): string[] => [...res.headers.keys()].filter((h) => OURS.test(h));

export interface Answer {
  status: number;
  headers: Headers;
  /** The body as text ("" when none). */
  text: string;
}

export interface Checker {
  /** Problems with `a` as an answer to `method` on the document's `path` template; empty when it conforms. */
  check(method: string, path: string, a: Answer): string[];
  /** Operations as [method, path template] pairs, document order. */
  operations(): [string, string][];
  /** Whether `text` is a request body the document accepts for the operation (JSON media types). */
  acceptsJsonBody(method: string, path: string, text: string): boolean;
}

const pointer = (parts: string[]) => "#/" + parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

export function createChecker(doc: Json): Checker {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  const id = "https://pixeldrop.invalid/openapi.json";
  ajv.addSchema({ ...doc, $id: id }, id);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (parts: string[]): ValidateFunction => {
    const ref = `${id}${pointer(parts)}`;
    let v = compiled.get(ref);
    if (!v) {
      v = ajv.compile({ $ref: ref });
      compiled.set(ref, v);
    }
    return v;
  };
  const headerValidators = new Map<string, ValidateFunction>();
  const headerValidator = (s: Json): ValidateFunction => {
    const k = JSON.stringify(s);
    let v = headerValidators.get(k);
    if (!v) headerValidators.set(k, (v = ajv.compile(s)));
    return v;
  };
  const resolveHeader = (h: Json): Json => {
    if (typeof h.$ref !== "string") return h;
    const name = h.$ref.replace("#/components/headers/", "");
    return doc.components?.headers?.[name] ?? {};
  };

  function check(method: string, path: string, a: Answer): string[] {
    const where = `${method.toUpperCase()} ${path} → ${a.status}`;
    const op = doc.paths?.[path]?.[method];
    if (!op) return [`${where}: the operation is not in the document`];
    const responses = (op.responses ?? {}) as Json;
    const key = [String(a.status), `${String(a.status)[0]}XX`, "default"].find((k) => k in responses);
    if (!key) return [`${where}: status not listed (${Object.keys(responses).join(", ")}); body ${a.text.slice(0, 160)}`];
    const r = responses[key] as Json;
    const problems: string[] = [];

    // Media type and body.
    const content = (r.content ?? {}) as Json;
    const type = (a.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (Object.keys(content).length === 0) {
      if (a.text !== "") problems.push(`${where}: a body where the document lists none`);
    } else if (!(type in content)) {
      problems.push(`${where}: media type "${type}" not listed (${Object.keys(content).join(", ")})`);
    } else if (type === "application/json" && content[type].schema) {
      let body: unknown;
      try {
        body = JSON.parse(a.text);
      } catch {
        problems.push(`${where}: application/json that does not parse: ${a.text.slice(0, 120)}`);
      }
      if (body !== undefined) {
        const v = validator(["paths", path, method, "responses", key, "content", type, "schema"]);
        if (!v(body)) problems.push(`${where}: body does not match the schema: ${ajv.errorsText(v.errors)}; body ${a.text.slice(0, 200)}`);
      }
    }

    // Headers: required ones present, present ones documented and valid.
    const documented = new Map<string, { spec: Json; name: string }>();
    for (const [name, h] of Object.entries((r.headers ?? {}) as Json)) documented.set(name.toLowerCase(), { spec: resolveHeader(h as Json), name });
    for (const [lower, { spec, name }] of documented) {
      const value = a.headers.get(lower);
      if (value === null) {
        if (spec.required === true) problems.push(`${where}: required header ${name} missing`);
        continue;
      }
      if (spec.schema) {
        const s = spec.schema as Json;
        const numeric = s.type === "integer" || s.type === "number";
        const parsed = numeric ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
        const v = headerValidator(s);
        if (!v(parsed)) problems.push(`${where}: header ${name}: ${JSON.stringify(value.slice(0, 80))} ${ajv.errorsText(v.errors)}`);
      }
    }
    for (const [name] of a.headers) {
      if (OURS.test(name) && !documented.has(name.toLowerCase())) problems.push(`${where}: header ${name} is not documented for this answer`);
    }
    return problems;
  }

  function operations(): [string, string][] {
    const out: [string, string][] = [];
    for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
      for (const method of Object.keys(item as Json)) if (["get", "post", "put", "patch", "delete"].includes(method)) out.push([method, path]);
    }
    return out;
  }

  function acceptsJsonBody(method: string, path: string, text: string): boolean {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return false;
    }
    return validator(["paths", path, method, "requestBody", "content", "application/json", "schema"])(value) === true;
  }

  return { check, operations, acceptsJsonBody };
}
