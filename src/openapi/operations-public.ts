// The public API (X-Api-Key), the health routes and the routes that serve this
// description. Error conditions are the spec's tables (§7) plus the decisions in
// docs/DECISIONS.md; test/openapi/errors-reachable.test.ts produces every one of
// them through the app, so an entry here that the gateway cannot give fails a test.
import { IDEMPOTENCY_MAX_REPLAYS } from "../billing/idempotency.ts";
import { H } from "../http/headers.ts";
import { MAX_FORM_PARTS } from "../http/multipart.ts";
import { METRICS_PATH } from "../metrics/route.ts";
import { IMAGE_HEADERS, RATE_LIMIT_HEADERS } from "./headers.ts";
import type { ErrorDoc, Operation } from "./model.ts";
import { OPERATOR_TOKEN_ERRORS } from "./operations-admin.ts";
import { REMOVEBG_FORM } from "./removebg-form.ts";
import { AccountInfo, Healthy, Readiness, RemoveBgJson } from "./schemas.ts";

/** Answers any authenticated public call can get: key, IP guard, stores. */
const KEY_ERRORS: ErrorDoc[] = [
  { code: "invalid_api_key", when: "X-Api-Key missing, malformed, nonexistent, deleted, expired or dormant." },
  { code: "key_suspended", when: "The operator suspended the key." },
  { code: "rate_limited", when: "An invalid key from an IP address that sent many (by default more than 20 within 60 s), until the window passes. A valid key from that address is served." },
];
const SERVER_ERRORS: ErrorDoc[] = [
  { code: "internal_error", when: "An unexpected fault; logged with the request ID. Nothing is charged." },
];

const REMOVEBG_ERRORS: ErrorDoc[] = [
  {
    code: "invalid_parameter",
    when:
      `The multipart body cannot be read or has more than ${MAX_FORM_PARTS} parts; image_file missing, empty or sent as text; a part sent twice; a bad semitransparency value; crop_margin sent; ` +
      "the image is unreadable, of an unknown format or over 12 megapixels; a malformed Idempotency-Key.",
  },
  {
    code: "unsupported_parameter",
    when: "size, type or format outside the listed values; crop other than false; image_url or image_file_b64 sent (also as JSON or urlencoded); an unknown part; any query string.",
  },
  KEY_ERRORS[0]!,
  { code: "insufficient_credits", when: "Live key: the balance less amounts held is below the price tier's reserve (22 or 110 KRW)." },
  KEY_ERRORS[1]!,
  { code: "product_not_enabled", when: "The product is switched off for the app (including before review)." },
  { code: "refund_pending", when: "Live key of an organization whose refund is being processed." },
  { code: "product_discontinued", when: "The product is withdrawn from sale." },
  { code: "file_too_large", when: "The body is over 12,000,000 bytes, announced by Content-Length or found while receiving." },
  {
    code: "rate_limited",
    when: "The organization's live concurrency cap (2), the service's overall concurrency cap, or an invalid key from an IP address that sent many. Retry-After says when.",
  },
  { code: "daily_limit_reached", when: "Live key: the organization's or the app's daily spending limit (KST day) would be passed. Retry-After: until 00:00 KST." },
  { code: "monthly_limit_reached", when: "Live key: the app's monthly spending limit would be passed. Retry-After: until the 1st, 00:00 KST." },
  {
    code: "test_quota_exceeded",
    when: "Test key: over 50 calls this month, 10 per minute or 1 at a time; for an operator-reduced organization, over 50 for its lifetime.",
  },
  { code: "key_queue_full", when: "Product: too many requests of this key queued; still so after the gateway's resends. Retry-After." },
  { code: "inference_failed", when: "Product: processing failed after it began; not resent. Report the request ID if it repeats." },
  ...SERVER_ERRORS,
  { code: "upstream_error", when: "The product service could not be reached (after resends) or answered something malformed." },
  {
    code: "service_unavailable",
    when: "Maintenance (Retry-After: 300), or a backing store or billing is unavailable (Retry-After: 5). Nothing is charged.",
  },
  { code: "gateway_busy", when: "The gateway's budget of bytes being received is used up. Retry-After: 2." },
  { code: "deadline_unreachable", when: "Product: processing could not start within the deadline; still so after resends. Retry-After." },
  { code: "queue_full", when: "Product: its queue is full; still so after resends. Retry-After." },
  { code: "shutting_down", when: "Product: the process is shutting down; still so after resends. Retry-After: 5." },
  { code: "service_not_ready", when: "Product: the model is still loading; still so after resends. Retry-After: 10." },
  { code: "receive_budget_exhausted", when: "Product: its budget of bytes being received is used up; still so after resends. Retry-After: 2." },
  { code: "model_unavailable", when: "Product: the model could not be loaded; still so after resends. Retry-After: 30." },
  { code: "upstream_timeout", when: "No result within 140 s of first receipt (including resends). Set client timeouts to at least 150 s." },
  { code: "idempotency_key_in_use", when: "The first request with this Idempotency-Key is still running (or its charge is being settled). Retry-After: 2." },
  { code: "idempotency_key_reused", when: "This Idempotency-Key was used in the last 24 hours for a different request (other image bytes, parameters or key kind)." },
  { code: "idempotency_key_exhausted", when: `This Idempotency-Key's result was already sent again ${IDEMPOTENCY_MAX_REPLAYS} times; a new call needs a new key (and is charged).` },
];

export const PUBLIC_OPERATIONS: Operation[] = [
  {
    operationId: "removeBackground",
    method: "post",
    path: "/v1.0/removebg",
    tag: "Background removal",
    summary: "Remove the background of an image",
    description:
      "Sends one image and gets it back as an RGBA PNG with the background removed. A live key reserves the price tier's amount " +
      "first and is charged once, on success, by output pixels; every error is free. A test key is free, fixed to preview size, " +
      "50 calls a month, 10 a minute, 1 at a time. Requests rejected before processing are resent by the gateway at most twice " +
      "within 140 s of first receipt: set the client timeout to at least 150 s and honour Retry-After on 429 and 503. " +
      "No query string is accepted (400 unsupported_parameter). Other methods on this path: 405 method_not_allowed with Allow: POST.",
    security: "apiKey",
    headerParams: [
      {
        name: H.idempotencyKey,
        description:
          "Optional, 1–255 printable ASCII characters (e.g. a UUID), scoped to the app and kept 24 hours. The same key with the same " +
          "request (same image bytes and parameters) after a success is answered again, charged nothing (X-PD-Charged-KRW: 0, " +
          `Idempotent-Replayed: true), at most ${IDEMPOTENCY_MAX_REPLAYS} times (then 422` +
          " idempotency_key_exhausted), and only where a first call would " +
          "run: a live key's balance and spending limits must cover the tier's price (held while it runs, then released), a test " +
          "key must have a free call left; with a different request 422 idempotency_key_reused; while the first runs 409 " +
          "idempotency_key_in_use. A request that ended in an error keeps nothing. Malformed: 400 invalid_parameter.",
        schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$" },
      },
    ],
    requestBody: {
      required: true,
      contents: [{ mediaType: "multipart/form-data", schema: REMOVEBG_FORM, name: "RemoveBgForm" }],
      encoding: { image_file: { contentType: "image/png, image/jpeg, image/webp, application/octet-stream" } },
    },
    success: {
      status: 200,
      description: "The image with its background removed. JSON instead of PNG when Accept prefers application/json over images.",
      contents: [
        { mediaType: "image/png", schema: { type: "string", contentMediaType: "image/png" } },
        { mediaType: "application/json", schema: RemoveBgJson, name: "RemoveBgJson" },
      ],
      headers: [...IMAGE_HEADERS, H.replayed],
    },
    errors: REMOVEBG_ERRORS,
    errorHeaders: ["Retry-After", H.testSize, H.testRemaining, ...RATE_LIMIT_HEADERS],
  },
  {
    operationId: "getAccount",
    method: "get",
    path: "/v1.0/account",
    tag: "Account",
    summary: "Credit left (live key) or free calls left (test key)",
    description: "Beyond the spec, as the mirrored API has it. Free, never charged; the same key errors as removebg.",
    security: "apiKey",
    success: {
      status: 200,
      description: "The key's organization: balance for a live key, remaining free calls for a test key.",
      contents: [{ mediaType: "application/json", schema: AccountInfo, name: "AccountInfo" }],
      headers: [H.requestId, H.testSize, H.testRemaining],
    },
    errors: [
      ...KEY_ERRORS,
      ...SERVER_ERRORS,
      { code: "service_unavailable", when: "A backing store is unavailable. Retry-After: 5." },
    ],
    errorHeaders: ["Retry-After"],
  },
  {
    operationId: "getHealth",
    method: "get",
    path: "/healthz",
    tag: "Health",
    summary: "Liveness: the process is up and its event loop turns",
    security: "none",
    success: { status: 200, description: "Alive.", contents: [{ mediaType: "application/json", schema: Healthy, name: "Healthy" }], headers: [H.requestId] },
    errors: [],
  },
  {
    operationId: "getReadiness",
    method: "get",
    path: "/readyz",
    tag: "Health",
    summary: "Readiness: models warm and stores reachable",
    description: "503 until every part is ready, naming the parts that are not.",
    security: "none",
    success: { status: 200, description: "Ready.", contents: [{ mediaType: "application/json", schema: Readiness, name: "Readiness" }], headers: [H.requestId] },
    otherResponses: [{ status: 503, description: "Not ready; `checks` says which part.", contents: [{ mediaType: "application/json", schema: Readiness, name: "Readiness" }] }],
    errors: [],
  },
  {
    operationId: "getMetrics",
    method: "get",
    path: METRICS_PATH,
    tag: "Health",
    summary: "Prometheus metrics (text exposition format)",
    description: "Counts, latencies per stage, queue depth, charges. Behind the operator token: they are business data.",
    security: "operatorToken",
    success: { status: 200, description: "The metrics.", contents: [{ mediaType: "text/plain", schema: { type: "string" } }], headers: [H.requestId] },
    errors: [...OPERATOR_TOKEN_ERRORS],
    errorHeaders: ["Retry-After", "WWW-Authenticate"],
  },
  {
    operationId: "getOpenApiDocument",
    method: "get",
    path: "/openapi.json",
    tag: "Interface description",
    summary: "This document (OpenAPI 3.1)",
    security: "none",
    success: { status: 200, description: "The OpenAPI document.", contents: [{ mediaType: "application/json", schema: { type: "object" } }], headers: [H.requestId] },
    errors: [],
  },
  {
    operationId: "getApiReference",
    method: "get",
    path: "/docs/api",
    tag: "Interface description",
    summary: "This document as an HTML page",
    security: "none",
    success: { status: 200, description: "The reference page.", contents: [{ mediaType: "text/html", schema: { type: "string" } }], headers: [H.requestId] },
    errors: [],
  },
];
