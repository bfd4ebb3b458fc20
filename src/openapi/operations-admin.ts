// The operator API under /admin/v1 (bearer token) and the internal product endpoint.
// Request bodies are the zod schemas the handlers validate with (src/admin/*.ts).
import { Credit, CreateOrg, PatchOrg } from "../admin/orgs.ts";
import { CreateApp, PatchApp } from "../admin/apps.ts";
import { IssueKey } from "../admin/keys.ts";
import { PutProduct } from "../admin/product.ts";
import { RECONCILIATION_MAX_DAYS, RECONCILIATION_QUERY } from "../admin/reconciliation.ts";
import { Complete } from "../admin/refunds.ts";
import { OPERATOR_TOKEN_GUESSES, OPERATOR_TOKEN_WINDOW_MS } from "../admin/token-throttle.ts";
import { H } from "../http/headers.ts";
import { PRODUCT_PATH } from "../http/product-path.ts";
import { SIZES } from "../contract/params.ts";
import { TEST_KEY_SIZE } from "../gateway/test-key.ts";
import { IMAGE_HEADERS } from "./headers.ts";
import type { Body, ErrorDoc, Operation } from "./model.ts";
import { REMOVEBG_FORM } from "./removebg-form.ts";
import {
  AppCreated,
  AppView,
  BalanceAfter,
  KeyIssued,
  KeyReissued,
  KeyView,
  OrgCreated,
  OrgView,
  ProductStatus,
  ReconciliationReport,
  RefundCompleted,
  RequestRecord,
} from "./schemas.ts";

const ADMIN = "/admin/v1";
const badBody: ErrorDoc = {
  code: "invalid_parameter",
  when: "A required body is missing, the body is not JSON, or a field is missing, unknown, of the wrong type or out of range; the title names the field.",
};
const missing = (what: string): ErrorDoc => ({ code: "not_found", when: `${what} does not exist (also for a path id that is not of the shape of ours).` });

const json = (schema: Body["schema"], name: string, example?: unknown): Body[] => [
  { mediaType: "application/json", schema, name, ...(example === undefined ? {} : { example }) },
];

const param = (name: string, description: string) => ({ name, description });
const orgId = param("orgId", "Organization ID.");
const appId = param("appId", "App ID.");
const keyId = param("keyId", "Key ID (not the key text).");

/** What every route behind the operator token answers (src/admin/auth.ts), before its own errors. */
export const OPERATOR_TOKEN_ERRORS: readonly ErrorDoc[] = [
  { code: "unauthorized", when: "Authorization is not `Bearer <OPERATOR_TOKEN>`." },
  {
    code: "rate_limited",
    when: `${OPERATOR_TOKEN_GUESSES} wrong tokens from this client within ${OPERATOR_TOKEN_WINDOW_MS / 1000} s: its tokens are not compared until Retry-After.`,
  },
];

function op(o: Omit<Operation, "tag" | "security" | "path" | "errorHeaders"> & { path: string }): Operation {
  return { ...o, path: ADMIN + o.path, tag: "Operator", security: "operatorToken", errorHeaders: ["Retry-After", "WWW-Authenticate"] };
}

function jsonBody(schema: Body["schema"], name: string, example: unknown): Operation["requestBody"] {
  return { required: true, contents: json(schema, name, example) };
}

const keyChange = (operationId: string, method: "post" | "delete", path: string, summary: string, description?: string): Operation =>
  op({
    operationId,
    method,
    path,
    summary,
    ...(description ? { description } : {}),
    pathParams: [keyId],
    success: { status: 200, description: "The key after the change (no key text).", contents: json(KeyView, "KeyView"), headers: [H.requestId] },
    errors: [missing("The key")],
  });

export const ADMIN_OPERATIONS: Operation[] = [
  op({
    operationId: "createOrg",
    method: "post",
    path: "/orgs",
    summary: "Create an organization with a verified owner",
    requestBody: jsonBody(CreateOrg, "CreateOrg", { email: "owner@example.com" }),
    success: { status: 201, description: "Created.", contents: json(OrgCreated, "OrgCreated"), headers: [H.requestId] },
    errors: [badBody, { code: "conflict", when: "The e-mail address is already registered." }],
  }),
  op({
    operationId: "getOrg",
    method: "get",
    path: "/orgs/:orgId",
    summary: "Read an organization: balance, limits, states",
    pathParams: [orgId],
    success: { status: 200, description: "The organization.", contents: json(OrgView, "OrgView"), headers: [H.requestId] },
    errors: [missing("The organization")],
  }),
  op({
    operationId: "patchOrg",
    method: "patch",
    path: "/orgs/:orgId",
    summary: "Change daily limit, refund-pending state or test quota kind",
    description: "testQuota `lifetime` restricts the organization to 50 test calls for its lifetime.",
    pathParams: [orgId],
    requestBody: jsonBody(PatchOrg, "PatchOrg", { dailyLimitKrw: 50000 }),
    success: { status: 200, description: "The organization after the change.", contents: json(OrgView, "OrgView"), headers: [H.requestId] },
    errors: [badBody, missing("The organization")],
  }),
  op({
    operationId: "creditOrg",
    method: "post",
    path: "/orgs/:orgId/credit",
    summary: "Add prepaid credit",
    pathParams: [orgId],
    requestBody: jsonBody(Credit, "Credit", { amountKrw: 10000 }),
    success: { status: 200, description: "The balance after the credit.", contents: json(BalanceAfter, "BalanceAfter"), headers: [H.requestId] },
    errors: [badBody, missing("The organization")],
  }),
  op({
    operationId: "createApp",
    method: "post",
    path: "/orgs/:orgId/apps",
    summary: "Create an app (product off unless productEnabled)",
    pathParams: [orgId],
    requestBody: jsonBody(CreateApp, "CreateApp", { name: "demo", productEnabled: true }),
    success: { status: 201, description: "Created.", contents: json(AppCreated, "AppCreated"), headers: [H.requestId] },
    errors: [badBody, missing("The organization")],
  }),
  op({
    operationId: "patchApp",
    method: "patch",
    path: "/apps/:appId",
    summary: "Switch the product, set or clear (null) daily and monthly limits, rename",
    pathParams: [appId],
    requestBody: jsonBody(PatchApp, "PatchApp", { productEnabled: true, monthlyLimitKrw: null }),
    success: { status: 200, description: "The app after the change.", contents: json(AppView, "AppView"), headers: [H.requestId] },
    errors: [badBody, missing("The app (or it was deleted)")],
  }),
  op({
    operationId: "issueKey",
    method: "post",
    path: "/apps/:appId/keys",
    summary: "Issue the app's test or live key",
    description: "The key text is in this answer only.",
    pathParams: [appId],
    requestBody: jsonBody(IssueKey, "IssueKey", { kind: "live" }),
    success: { status: 201, description: "Issued.", contents: json(KeyIssued, "KeyIssued"), headers: [H.requestId, "Cache-Control"] },
    errors: [
      badBody,
      missing("The app (or it was deleted)"),
      { code: "conflict", when: "The app already has a key of that kind (reissue it), or a live key for an owner whose e-mail is not verified." },
      { code: "key_suspended", when: "The app's keys of that kind are suspended: lift the suspension first." },
    ],
  }),
  op({
    operationId: "reissueKey",
    method: "post",
    path: "/keys/:keyId/reissue",
    summary: "Reissue a key; the old one stays valid 7 more days",
    pathParams: [keyId],
    success: { status: 201, description: "The new key.", contents: json(KeyReissued, "KeyReissued"), headers: [H.requestId, "Cache-Control"] },
    errors: [
      missing("The key"),
      { code: "conflict", when: "The key was already replaced." },
      { code: "key_suspended", when: "The key is suspended: lift the suspension first." },
    ],
  }),
  keyChange(
    "suspendKey",
    "post",
    "/keys/:keyId/suspend",
    "Suspend a key and every key of its app and kind (their calls get 403 key_suspended)",
    "The suspension is the app's access of the key's kind: the key, the partner it overlaps with after a reissue, and any key of that " +
      "kind issued later are refused until it is lifted. Meanwhile the customer can neither delete, reissue nor issue a key of that kind, " +
      "nor delete the app. The app's keys of the other kind are not affected.",
  ),
  keyChange("unsuspendKey", "post", "/keys/:keyId/unsuspend", "Lift a suspension", "Any key of the app and kind lifts it, a deleted one too."),
  keyChange("deleteKey", "delete", "/keys/:keyId", "Delete a key (its calls get 401 invalid_api_key)"),
  op({
    operationId: "putProductStatus",
    method: "put",
    path: "/product",
    summary: "Set the product's sale status for everyone",
    description: "discontinued → 403 product_discontinued; maintenance → 503 service_unavailable with Retry-After: 300.",
    requestBody: jsonBody(PutProduct, "PutProduct", { status: "available" }),
    success: { status: 200, description: "The status now.", contents: json(ProductStatus, "ProductStatus"), headers: [H.requestId] },
    errors: [badBody],
  }),
  op({
    operationId: "getProductStatus",
    method: "get",
    path: "/product",
    summary: "Read the product's sale status",
    success: { status: 200, description: "The status.", contents: json(ProductStatus, "ProductStatus"), headers: [H.requestId] },
    errors: [],
  }),
  op({
    operationId: "getRequest",
    method: "get",
    path: "/requests/:requestId",
    summary: "Look up one request by the ID a customer quotes",
    pathParams: [param("requestId", "The X-PD-Request-Id value.")],
    success: { status: 200, description: "The request log row.", contents: json(RequestRecord, "RequestRecord"), headers: [H.requestId] },
    errors: [missing("No request with this ID")],
  }),
  op({
    operationId: "completeRefund",
    method: "post",
    path: "/orgs/:orgId/refund/complete",
    summary: "Complete a refund requested in the console",
    description:
      "Pays back amountKrw through the payment provider that took it (default: all the organization paid in through a provider and " +
      "has not had back, within what requests in progress do not hold) and lifts the refusal of paid calls. Operator credit and " +
      "sandbox top-ups are credit, never money: they are not paid back and stay on the balance. Each refund is recorded, and taken " +
      "off the balance, before the provider is asked; one the provider answers `pending` is paid when it says so, and one it fails " +
      "comes back to the balance. A completion that failed part way is asked again as it was: the refunds it made count towards " +
      "amountKrw, and one whose answer was lost is looked up at the provider, never paid twice.",
    pathParams: [orgId],
    requestBody: { required: false, contents: json(Complete, "CompleteRefund", { note: "refund #123" }) },
    success: { status: 200, description: "Done.", contents: json(RefundCompleted, "RefundCompleted"), headers: [H.requestId] },
    errors: [
      badBody,
      missing("The organization"),
      { code: "conflict", when: "No refund is being processed; the amount is larger than the available balance or than what was paid in through a provider; or the provider refused the refund." },
      { code: "upstream_error", when: "The payment provider did not answer; what was paid back so far is recorded, and asking again pays nothing twice." },
    ],
  }),
  op({
    operationId: "getReconciliation",
    method: "get",
    path: "/reconciliation",
    summary: "Compare the payment provider's records with the ledger",
    description:
      "Per organization: the payments, refunds and disputes the payment provider recorded (read through its API) against the " +
      "ledger's entries for them, and every difference; a difference names both records and what each side holds. Covers records " +
      `created, by the provider or by us, within [from, to), at most ${RECONCILIATION_MAX_DAYS} days.`,
    queryParams: RECONCILIATION_QUERY,
    success: { status: 200, description: "The comparison.", contents: json(ReconciliationReport, "ReconciliationReport"), headers: [H.requestId] },
    errors: [
      { code: "invalid_parameter", when: `from or to missing, repeated or not a day or date-time with a zone; to not after from; more than ${RECONCILIATION_MAX_DAYS} days; another query parameter; or more records in the range than one answer reads.` },
      { code: "upstream_error", when: "The payment provider did not answer, or answered with something other than its documented lists." },
    ],
  }),
];

// Every operator route also answers these.
for (const o of ADMIN_OPERATIONS) {
  o.errors.unshift(...OPERATOR_TOKEN_ERRORS);
  if (o.requestBody) o.errors.push({ code: "unsupported_media_type", when: "A body sent with a Content-Type other than application/json (or with none)." });
  o.errors.push(
    { code: "internal_error", when: "An unexpected fault; logged with the request ID." },
    { code: "service_unavailable", when: "A backing store is unavailable. Retry-After: 5." },
  );
}

/** Served by processes that run the engine, for gateways elsewhere (PRODUCT_URL). */
export const INTERNAL_OPERATIONS: Operation[] = [
  {
    operationId: "internalRemoveBackground",
    method: "post",
    path: PRODUCT_PATH,
    tag: "Internal",
    internal: true,
    summary: "Product service: process an already authorised and paid request",
    description:
      "Called by gateways of a split deployment, never by customers. Bills nothing itself, so it needs the operator token. " +
      "The same multipart form as /v1.0/removebg.",
    security: "operatorToken",
    headerParams: [
      { name: H.requestId, description: "The gateway's request ID, kept across resends.", schema: { type: "string" } },
      { name: H.deadline, description: "Milliseconds since the epoch by which processing must have started and ended.", schema: { type: "integer" } },
      { name: H.queueKey, description: "Whose queue the request joins (the gateway sends the key ID).", schema: { type: "string" } },
      { name: H.forceSize, description: `Overrides size (the gateway sends ${TEST_KEY_SIZE} for test keys).`, schema: { type: "string", enum: [...SIZES] } },
      {
        name: H.callClass,
        description: "Which class of the queue the job joins: live jobs are served before test jobs (absent: live).",
        schema: { type: "string", enum: ["live", "test"] },
      },
    ],
    requestBody: { required: true, contents: [{ mediaType: "multipart/form-data", schema: REMOVEBG_FORM, name: "RemoveBgForm" }] },
    success: {
      status: 200,
      description: "The PNG result.",
      contents: [{ mediaType: "image/png", schema: { type: "string", contentMediaType: "image/png" } }],
      headers: IMAGE_HEADERS.filter((h) => h === H.requestId || h === H.model || h === H.modelInput || h === H.uncertainty || !(h.startsWith("X-PD-") || h.startsWith("X-RateLimit-"))),
    },
    errors: [
      { code: "invalid_parameter", when: "As for /v1.0/removebg, and an unreadable or over-12-megapixel image." },
      { code: "unsupported_parameter", when: "As for /v1.0/removebg." },
      ...OPERATOR_TOKEN_ERRORS,
      { code: "file_too_large", when: "The body is over 12,000,000 bytes." },
      { code: "key_queue_full", when: "Too many requests of this queue key waiting. Resendable." },
      { code: "inference_failed", when: "Processing failed after it began. Not resendable." },
      { code: "deadline_unreachable", when: "Processing cannot start before the deadline. Resendable." },
      { code: "queue_full", when: "The queue is full. Resendable." },
      { code: "shutting_down", when: "The process is shutting down. Resendable." },
      { code: "service_not_ready", when: "The model is still loading. Resendable." },
      { code: "receive_budget_exhausted", when: "Too many bytes being received. Resendable." },
      { code: "model_unavailable", when: "The model could not be loaded. Resendable." },
    ],
    errorHeaders: ["Retry-After", "WWW-Authenticate"],
  },
];
