// Requests generated from an OpenAPI document for every operation it lists, valid and
// broken, with fast-check: auth (valid, missing, wrong; API keys in every state), path
// ids (existing, unknown, impossible: a NUL byte, bytes that are not UTF-8), header
// parameters (valid and junk), JSON bodies (valid from the schema, then missing and
// unknown fields, wrong types, text the database cannot hold, non-objects, not JSON, no
// body, other media types), multipart forms (valid, every part's wrong value, refused
// parts, duplicates, a broken or truncated body, a wrong boundary) and stray query
// strings. Each request goes through app.request() and its answer through contract.ts.
import fc from "fast-check";
import { TINY_PNG } from "../gateway/helpers.ts";
import type { Harness } from "../support/harness.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import type { Checker } from "./contract.ts";

type Json = Record<string, any>;

export interface GenRequest {
  method: string;
  /** The document's path template, e.g. /admin/v1/orgs/{orgId}. */
  template: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  /** What was generated, for a failure message. */
  label: string;
  /** Why the document requires a refusal (a 4xx) of this request, when it does. */
  mustRefuse?: string;
  /** A JSON body sent as JSON: the document's schema decides whether it must be refused. */
  judgeJson?: string;
}

/** Objects in every state the API distinguishes; built once per suite. */
export interface Fixtures {
  /** API keys by state. */
  keys: Record<string, string>;
  /** Ids usable by operator routes (throwaway objects: these routes change them). */
  ids: Record<"orgId" | "appId" | "keyId" | "requestId", string[]>;
}

const ips = ["10.77.0.1", "10.77.0.2", "10.77.0.3", "10.77.0.4", "10.77.0.5", "10.77.0.6"];

/** Values that are no id of ours; path-encoded. */
const IMPOSSIBLE_IDS = ["%00", "org_%00", "key_a%00b", "%FF", "%C3%28", "x".repeat(200), "%20", "org_%C3%A4", "req_%F0%9F%98%80", "-1", "null"];

export async function makeFixtures(h: Harness): Promise<Fixtures> {
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await h.admin(method, path, body);
    if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json;
  };
  const rich = await h.customer({ creditKrw: 200_000 });
  const broke = await h.customer({});
  const refund = await h.customer({ creditKrw: 5_000 });
  await admin("PATCH", `/orgs/${refund.orgId}`, { refundPending: true });
  const lifetime = await h.customer({ creditKrw: 5_000 });
  await admin("PATCH", `/orgs/${lifetime.orgId}`, { testQuota: "lifetime" });
  const capped = await h.customer({ creditKrw: 5_000 });
  await admin("PATCH", `/orgs/${capped.orgId}`, { dailyLimitKrw: 0 });
  const monthly = await h.customer({ creditKrw: 5_000 });
  await admin("PATCH", `/apps/${monthly.appId}`, { monthlyLimitKrw: 0 });
  const off = await h.customer({ creditKrw: 5_000, productEnabled: false });
  const suspended = await h.customer({ creditKrw: 5_000 });
  await admin("POST", `/keys/${suspended.liveKeyId}/suspend`);
  await admin("POST", `/keys/${suspended.testKeyId}/suspend`);
  const deleted = await h.customer({ creditKrw: 5_000 });
  await admin("DELETE", `/keys/${deleted.liveKeyId}`);
  await admin("DELETE", `/keys/${deleted.testKeyId}`);
  const reissued = await h.customer({ creditKrw: 5_000 });
  await admin("POST", `/keys/${reissued.liveKeyId}/reissue`);
  const keys: Record<string, string> = {
    liveActive: rich.liveKey!,
    testActive: rich.testKey,
    liveNoCredit: broke.liveKey!,
    liveRefundPending: refund.liveKey!,
    testLifetimeQuota: lifetime.testKey,
    liveDailyLimitZero: capped.liveKey!,
    liveMonthlyLimitZero: monthly.liveKey!,
    liveProductOff: off.liveKey!,
    testProductOff: off.testKey,
    liveSuspended: suspended.liveKey!,
    testSuspended: suspended.testKey,
    liveDeleted: deleted.liveKey!,
    testDeleted: deleted.testKey,
    liveReissuedOld: reissued.liveKey!,
  };
  // Throwaway objects for the operator routes, which suspend, delete and reissue them.
  const spare = await Promise.all([0, 1, 2].map(() => h.customer({ creditKrw: 1_000 })));
  const ids = {
    orgId: spare.map((c) => c.orgId),
    appId: spare.map((c) => c.appId),
    keyId: spare.flatMap((c) => [c.liveKeyId!, c.testKeyId]),
    requestId: [] as string[],
  };
  // Request ids: a few calls' X-PD-Request-Id (the removebg one, last, is in the request log).
  for (const key of [keys.liveActive, keys.testActive, keys.liveNoCredit]) {
    const res = await h.app.request("/v1.0/account", { headers: { "x-api-key": key, "x-forwarded-for": ips[0]! } });
    await res.arrayBuffer();
    ids.requestId.push(res.headers.get("x-pd-request-id")!);
  }
  const form = multipartBytes([{ name: "image_file", filename: "a.png", data: TINY_PNG }, { name: "size", data: "preview" }]);
  const res = await h.app.request("/v1.0/removebg", {
    method: "POST",
    headers: { "x-api-key": keys.liveActive!, "x-forwarded-for": ips[0]!, "content-type": form.type },
    body: form.bytes as Uint8Array<ArrayBuffer>,
  });
  await res.arrayBuffer();
  ids.requestId.push(res.headers.get("x-pd-request-id")!);
  return { keys, ids };
}

// ---- multipart ---------------------------------------------------------------------

interface Part {
  name: string;
  filename?: string;
  data: Uint8Array | string;
}

export function multipartBytes(parts: Part[], boundary = "pdgen7MA4YWxkTrZu0gW"): { bytes: Uint8Array; type: string } {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    const disp = `Content-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ""}`;
    const type = p.filename ? "\r\nContent-Type: application/octet-stream" : "";
    chunks.push(enc.encode(`--${boundary}\r\n${disp}${type}\r\n\r\n`), typeof p.data === "string" ? enc.encode(p.data) : p.data, enc.encode("\r\n"));
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`));
  const bytes = new Uint8Array(chunks.reduce((a, c) => a + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { bytes, type: `multipart/form-data; boundary=${boundary}` };
}

// ---- values from schemas ------------------------------------------------------------

function resolve(doc: Json, s: Json): Json {
  if (typeof s?.$ref !== "string") return s ?? {};
  return s.$ref.replace("#/", "").split("/").reduce((o: Json, k: string) => o[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
}

/** A valid value for a (JSON body) schema. */
export function valueOf(doc: Json, schema: Json): fc.Arbitrary<unknown> {
  const s = resolve(doc, schema);
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if (Array.isArray(s.anyOf)) return fc.oneof(...s.anyOf.map((x: Json) => valueOf(doc, x)));
  if (Array.isArray(s.oneOf)) return fc.oneof(...s.oneOf.map((x: Json) => valueOf(doc, x)));
  if (Array.isArray(s.type)) return fc.oneof(...s.type.map((t: string) => valueOf(doc, { ...s, type: t })));
  switch (s.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({ min: Math.max(s.minimum ?? -1e6, s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1e6), max: Math.min(s.maximum ?? 1e6, 1e9) });
    case "number":
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case "string":
      return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.max(s.minLength ?? 0, Math.min(s.maxLength ?? 24, 24)) }).map((v) =>
        // An e-mail field must look like one to be worth sending.
        s.maxLength === 254 ? `g${v.replace(/[^a-z0-9]/gi, "")}${Math.random().toString(36).slice(2)}@example.com` : v,
      );
    case "object": {
      const props = (s.properties ?? {}) as Json;
      const required = (s.required ?? []) as string[];
      return fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valueOf(doc, v)])), { requiredKeys: required as never[] });
    }
    default:
      return fc.anything();
  }
}

const wrongValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.constantFrom(1.5, -1, 1e20, -0, 2 ** 53 + 2),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constantFrom("a\u0000b", "\u0000", "\ud800", "x".repeat(5000), "é€😀"),
);

/** A JSON body with one thing wrong (or not JSON at all), as the text sent. */
function brokenJson(doc: Json, schema: Json): fc.Arbitrary<string> {
  const s = resolve(doc, schema);
  const props = Object.keys(s.properties ?? {});
  const valid = valueOf(doc, s) as fc.Arbitrary<Json>;
  const mutations: fc.Arbitrary<string>[] = [
    fc.tuple(valid, fc.string({ minLength: 1, maxLength: 10 })).map(([v, k]) => JSON.stringify({ ...v, [`unknown_${k}`]: 1 })),
    fc.constantFrom("{", "{'a':1}", "[1,", "nul", "\u0000", "{}garbage", '{"a":1}{"b":2}', "\ufeff{x}"),
    fc.constantFrom("[]", "1", '"text"', "null", "true", "[{}]"),
  ];
  if (props.length) {
    mutations.push(
      fc.tuple(valid, fc.constantFrom(...props), wrongValue).map(([v, k, w]) => JSON.stringify({ ...v, [k]: w })),
      fc.tuple(valid, fc.constantFrom(...props), fc.constantFrom("a\u0000b", "\u0000")).map(([v, k, w]) => JSON.stringify({ ...v, [k]: w })),
    );
  }
  for (const k of (s.required ?? []) as string[]) {
    mutations.push(valid.map((v) => JSON.stringify(Object.fromEntries(Object.entries(v).filter(([x]) => x !== k)))));
  }
  return fc.oneof(...mutations);
}

// ---- one operation ------------------------------------------------------------------

const JSON_TYPES = ["application/json", "application/json; charset=utf-8"];
const OTHER_TYPES = ["text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data", "application/octet-stream", "image/png", ""];

interface Body {
  body?: Uint8Array | string;
  type?: string;
  label: string;
  /** The document's request body rules say no (wrong media type, missing). */
  refuse?: string;
  /** Sent as JSON: judged by the schema. */
  judge?: boolean;
}

function jsonBodies(doc: Json, media: Json, required: boolean): fc.Arbitrary<Body> {
  const schema = media.schema as Json;
  const valid = fc.oneof(
    fc.constant(media.example).filter((x) => x !== undefined).map((x) => JSON.stringify(x)),
    valueOf(doc, schema).map((v) => JSON.stringify(v)),
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.tuple(valid, fc.constantFrom(...JSON_TYPES)).map(([body, type]) => ({ body, type, label: `valid JSON ${body.slice(0, 80)}`, judge: true })) },
    { weight: 4, arbitrary: fc.tuple(brokenJson(doc, schema), fc.constantFrom(...JSON_TYPES)).map(([body, type]) => ({ body, type, label: `broken JSON ${body.slice(0, 80)}`, judge: true })) },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.constantFrom(...OTHER_TYPES, "<xml/>")).map(([body, type]): Body =>
        type === "<xml/>"
          ? { body: "<org><email>a@example.com</email></org>", type: "application/xml", label: "XML", refuse: "not application/json" }
          : { body, type: type || undefined, label: `JSON as ${type || "no type"}`, refuse: "not application/json" },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Body>({ label: "no body" }, { type: "application/json", label: "no body, JSON type" }, { body: " ", type: "application/json", label: "blank body" }).map((b) =>
        required ? { ...b, refuse: "a required body missing" } : b,
      ),
    },
  );
}

function formBodies(doc: Json, media: Json): fc.Arbitrary<Body> {
  const form = resolve(doc, media.schema as Json);
  const props = Object.entries((form.properties ?? {}) as Json);
  const textProps = props.filter(([, p]) => !p.contentMediaType && !("not" in p));
  const refused = props.filter(([, p]) => "not" in p).map(([k]) => k);
  const goodValue = (p: Json): fc.Arbitrary<string> =>
    Array.isArray(p.enum) ? fc.constantFrom(...(p.enum as string[])) : Array.isArray(p.examples) ? fc.constantFrom(...(p.examples as string[])) : fc.string({ maxLength: 8 });
  const image = { name: "image_file", filename: "a.png", data: TINY_PNG };
  const validParts = fc
    .subarray(textProps)
    .chain((chosen) => fc.tuple(...chosen.map(([k, p]) => goodValue(p).map((v) => ({ name: k, data: v })))))
    .map((parts) => [image, ...parts.filter((p) => p.name !== "size"), { name: "size", data: "preview" }] as Part[]);
  const badImage = fc.oneof(
    fc.constant<Part>({ name: "image_file", data: "not a file" }),
    fc.constant<Part>({ name: "image_file", filename: "e.png", data: new Uint8Array(0) }),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((d): Part => ({ name: "image_file", filename: "g.png", data: d })),
    fc.integer({ min: 8, max: TINY_PNG.byteLength - 1 }).map((n): Part => ({ name: "image_file", filename: "t.png", data: TINY_PNG.slice(0, n) })),
  );
  const mutated: fc.Arbitrary<{ parts: Part[]; what: string }> = fc.oneof(
    validParts.map((p) => ({ parts: p.filter((x) => x.name !== "image_file"), what: "no image_file" })),
    fc.tuple(validParts, badImage).map(([p, b]) => ({ parts: [b, ...p.filter((x) => x.name !== "image_file")], what: "bad image" })),
    fc.tuple(validParts, fc.constantFrom(...textProps.map(([k]) => k)), fc.string({ maxLength: 10 })).map(([p, k, v]) => ({
      parts: [...p.filter((x) => x.name !== k), { name: k, data: `${v}\u00e9x` }],
      what: `${k} wrong`,
    })),
    fc.tuple(validParts, fc.constantFrom(...refused, "unknown_part", "IMAGE_FILE")).map(([p, k]) => ({ parts: [...p, { name: k, data: "https://example.com/a.png" }], what: `part ${k}` })),
    validParts.map((p) => ({ parts: [...p, p[0]!], what: "image_file twice" })),
  );
  const valid = validParts.map((parts) => ({ ...multipartBytes(parts), label: `form ${parts.map((p) => p.name).join(",")}` }));
  const broken = fc.oneof(
    mutated.map(({ parts, what }) => ({ ...multipartBytes(parts), label: `form: ${what}` })),
    fc.tuple(validParts, fc.integer({ min: 1, max: 400 })).map(([parts, cut]) => {
      const m = multipartBytes(parts);
      return { bytes: m.bytes.slice(0, m.bytes.byteLength - cut), type: m.type, label: `form truncated by ${cut}` };
    }),
    validParts.map((parts) => ({ bytes: multipartBytes(parts).bytes, type: "multipart/form-data; boundary=otherboundary", label: "form, wrong boundary" })),
    validParts.map((parts) => ({ bytes: multipartBytes(parts).bytes, type: "multipart/form-data", label: "form, no boundary" })),
  );
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((m) => ({ body: m.bytes, type: m.type, label: m.label })) },
    { weight: 5, arbitrary: broken.map((m) => ({ body: m.bytes, type: m.type, label: m.label })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Body>(
        { body: '{"image_url":"https://example.com/a.png"}', type: "application/json", label: "JSON image_url" },
        { body: "image_file_b64=AAAA", type: "application/x-www-form-urlencoded", label: "urlencoded b64" },
        { body: "hello", type: "text/plain", label: "text" },
        { label: "no body" },
      ),
    },
  );
}

interface Auth {
  headers: Record<string, string>;
  label: string;
  /** Set when the credentials are not the scheme's: the answer must be 401. */
  refuse?: string;
}

function authFor(op: Json, f: Fixtures): fc.Arbitrary<Auth> {
  const sec = ((op.security ?? []) as Json[]).flatMap((s) => Object.keys(s));
  if (sec.includes("apiKey")) {
    return fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...Object.entries(f.keys)).map(([state, key]) => ({ headers: { "x-api-key": key }, label: `key ${state}` })) },
      {
        weight: 2,
        arbitrary: fc.constantFrom<Auth>(
          { headers: {}, label: "no key", refuse: "no key" },
          { headers: { "x-api-key": `pd_live_${"0".repeat(32)}${"7".repeat(32)}` }, label: "unknown live key", refuse: "unknown key" },
          { headers: { "x-api-key": `pd_test_${"1".repeat(64)}` }, label: "unknown test key", refuse: "unknown key" },
          { headers: { "x-api-key": "garbage" }, label: "garbage key", refuse: "garbage key" },
          { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }, label: "operator token instead of a key", refuse: "no key" },
        ),
      },
    );
  }
  if (sec.includes("operatorToken")) {
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant({ headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }, label: "operator" }) },
      {
        weight: 2,
        arbitrary: fc.constantFrom<Auth>(
          { headers: {}, label: "no token", refuse: "no token" },
          { headers: { authorization: "Bearer wrong" }, label: "wrong token", refuse: "wrong token" },
          { headers: { authorization: `Basic ${btoa(`x:${OPERATOR_TOKEN}`)}` }, label: "basic auth", refuse: "not bearer" },
          { headers: { authorization: `Bearer ${OPERATOR_TOKEN}x` }, label: "token plus a byte", refuse: "wrong token" },
        ),
      },
    );
  }
  return fc.constantFrom<Auth>({ headers: {}, label: "no auth" }, { headers: { authorization: "Bearer whatever" }, label: "stray auth" });
}

function pathValue(name: string, f: Fixtures): fc.Arbitrary<string> {
  const known = (f.ids as Record<string, string[]>)[name] ?? [];
  const prefix = name === "requestId" ? "req_" : `${name.replace(/Id$/, "")}_`;
  return fc.oneof(
    { weight: 6, arbitrary: known.length ? fc.constantFrom(...known).map(encodeURIComponent) : fc.constant(`${prefix}missing`) },
    { weight: 1, arbitrary: fc.constantFrom(`${prefix}${"0".repeat(22)}`, `${prefix}missing`, "req_00000000000000000000000000") },
    { weight: 3, arbitrary: fc.constantFrom(...IMPOSSIBLE_IDS) },
  );
}

function headerValue(p: Json): fc.Arbitrary<string | undefined> {
  const s = (p.schema ?? {}) as Json;
  const good: fc.Arbitrary<string> = Array.isArray(s.enum)
    ? fc.constantFrom(...(s.enum as string[]))
    : s.type === "integer"
      ? fc.constantFrom(String(Date.now() + 60_000), "0", "1")
      : p.name === "X-PD-Request-Id"
        ? fc.constant("req_01m8a1n73ntehskd3gd6e0bmpj")
        : fc.uuid();
  const junk = fc.constantFrom("7", "7.5", "true", "", " ", "x".repeat(8192), "req_", "-1", "é", "a\tb", "NaN");
  return fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: good }, { weight: 2, arbitrary: junk });
}

/** A query parameter's value: the document's example, junk, or none. */
function queryValue(p: Json): fc.Arbitrary<string | undefined> {
  const good = p.example === undefined ? fc.constant(undefined) : fc.constant(String(p.example));
  const junk = fc.constantFrom("", "x", "2025-13-01", "2025-05-01T25:00:00Z", "%", "\u0000", "9".repeat(300), "1970-01-01");
  return fc.oneof({ weight: 4, arbitrary: good }, { weight: 2, arbitrary: junk }, { weight: 1, arbitrary: fc.constant(undefined) });
}

/** Requests for one operation of `doc`. */
export function requestsFor(doc: Json, method: string, template: string, f: Fixtures): fc.Arbitrary<GenRequest> {
  const op = doc.paths[template][method] as Json;
  const params = ((op.parameters ?? []) as Json[]).map((p) => resolve(doc, p));
  const pathParams = params.filter((p) => p.in === "path");
  const headerParams = params.filter((p) => p.in === "header");
  const queryParams = params.filter((p) => p.in === "query");
  const rb = op.requestBody ? resolve(doc, op.requestBody) : undefined;
  const [mediaType, media] = rb ? Object.entries(rb.content as Json)[0]! : [undefined, undefined];
  const body: fc.Arbitrary<Body> = !rb
    ? method === "get"
      ? fc.constant<Body>({ label: "no body" })
      : fc.oneof({ weight: 5, arbitrary: fc.constant<Body>({ label: "no body" }) }, { weight: 1, arbitrary: fc.constant<Body>({ body: '{"x":1}', type: "application/json", label: "stray body" }) })
    : mediaType === "multipart/form-data"
      ? formBodies(doc, media)
      : jsonBodies(doc, media, rb.required === true);
  return fc
    .record({
      auth: authFor(op, f),
      path: fc.tuple(...pathParams.map((p) => pathValue(p.name, f))),
      headers: fc.tuple(...headerParams.map(headerValue)),
      body,
      params: fc.tuple(...queryParams.map(queryValue)),
      query: fc.oneof({ weight: 9, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.constantFrom("size=full", "x=%00", "?") }),
      ip: fc.constantFrom(...ips),
    })
    .map(({ auth, path, headers, body, params: values, query, ip }) => {
      let i = 0;
      const pairs = queryParams.flatMap((p, j) => (values[j] === undefined ? [] : [`${encodeURIComponent(p.name)}=${encodeURIComponent(values[j]!)}`]));
      // A stray parameter, or a bare "?".
      if (query && query !== "?") pairs.push(query);
      const url = template.replace(/\{[^}]+\}/g, () => path[i++]!) + (pairs.length || query === "?" ? `?${pairs.join("&")}` : "");
      const h: Record<string, string> = { "x-forwarded-for": ip, ...auth.headers };
      headerParams.forEach((p, j) => {
        if (headers[j] !== undefined) h[p.name] = headers[j]!;
      });
      if (body.type) h["content-type"] = body.type;
      const sent = headerParams.filter((_, j) => headers[j] !== undefined).map((p, j) => `${p.name}=${JSON.stringify(String(headers[j]).slice(0, 20))}`);
      const impossible = path.find((v) => IMPOSSIBLE_IDS.includes(v));
      const mustRefuse = auth.refuse ?? (impossible !== undefined ? `path id ${impossible}` : undefined) ?? body.refuse;
      const judgeJson = body.judge && typeof body.body === "string" && body.body.trim() !== "" ? body.body : undefined;
      return { method: method.toUpperCase(), template, url, headers: h, body: body.body, label: [auth.label, body.label, ...sent].join("; "), mustRefuse, judgeJson };
    });
}

export interface RunResult {
  requests: number;
  byOperation: Map<string, number>;
  statuses: Map<string, Set<number>>;
  problems: string[];
}

/**
 * Sends `perOperation` generated requests for every operation of `doc` through the
 * app, checks every answer with `checker`, and collects the problems (the run does not
 * stop at the first). `reset` runs after each request (e.g. the product's sale status
 * back to available after a random PUT /admin/v1/product).
 */
export async function runGenerated(
  h: Harness,
  doc: Json,
  checker: Checker,
  f: Fixtures,
  o: { perOperation: number; seed: number; after?: (r: GenRequest) => Promise<void> },
): Promise<RunResult> {
  const result: RunResult = { requests: 0, byOperation: new Map(), statuses: new Map(), problems: [] };
  for (const [method, template] of checker.operations()) {
    const name = `${method.toUpperCase()} ${template}`;
    const samples = fc.sample(requestsFor(doc, method, template, f), { numRuns: o.perOperation, seed: o.seed });
    for (const r of samples) {
      let res: Response;
      try {
        res = await h.app.request(r.url, { method: r.method, headers: r.headers, body: r.body as BodyInit | undefined });
      } catch (e) {
        result.problems.push(`${name}: the request could not be made (${(e as Error).message}); ${r.label}`);
        continue;
      }
      const text = await res.text();
      result.requests++;
      result.byOperation.set(name, (result.byOperation.get(name) ?? 0) + 1);
      if (!result.statuses.has(name)) result.statuses.set(name, new Set());
      result.statuses.get(name)!.add(res.status);
      for (const p of checker.check(method, template, { status: res.status, headers: res.headers, text })) result.problems.push(`${p} [${r.url.slice(0, 80)}; ${r.label}]`);
      // A server error is never an answer the caller could have avoided: flagged whatever the document lists.
      if (res.status === 500 && text.includes('"internal_error"')) result.problems.push(`${name} → 500 internal_error [${r.url.slice(0, 80)}; ${r.label}]`);
      const mustRefuse = r.mustRefuse ?? (r.judgeJson !== undefined && !checker.acceptsJsonBody(method, template, r.judgeJson) ? "a body its schema refuses" : undefined);
      if (mustRefuse && !(res.status >= 400 && res.status < 500)) {
        result.problems.push(`${name} → ${res.status}: the document requires a refusal (${mustRefuse}) [${r.url.slice(0, 80)}; ${r.label}]`);
      }
      await o.after?.(r);
    }
  }
  return result;
}
