// The closed set of error codes the service can answer with, each with its HTTP
// status and a default human title. Codes and statuses come from the interface
// spec (gateway errors, product errors, retry conditions); the few marked "ours"
// are decisions recorded in docs/DECISIONS.md.

export const ERRORS = {
  // Gateway errors (spec §7)
  invalid_parameter: { status: 400, title: "The request could not be read" },
  unsupported_parameter: { status: 400, title: "A parameter or value is not supported" },
  invalid_api_key: { status: 401, title: "Missing or invalid API key" },
  insufficient_credits: { status: 402, title: "Not enough credit for this request" },
  key_suspended: { status: 403, title: "This API key is suspended" },
  product_not_enabled: { status: 403, title: "The product is not enabled for this app" },
  refund_pending: { status: 403, title: "A refund is being processed for this organization" },
  product_discontinued: { status: 403, title: "The product has been discontinued" },
  file_too_large: { status: 413, title: "Request body is larger than 12,000,000 bytes" },
  rate_limited: { status: 429, title: "Too many requests" },
  daily_limit_reached: { status: 429, title: "Daily spending limit reached" },
  monthly_limit_reached: { status: 429, title: "Monthly spending limit reached" },
  test_quota_exceeded: { status: 429, title: "Test key quota exceeded" },
  upstream_error: { status: 502, title: "The processing service failed to answer" },
  service_unavailable: { status: 503, title: "The service is temporarily unavailable" },
  gateway_busy: { status: 503, title: "The gateway is receiving too much data" },
  upstream_timeout: { status: 504, title: "No result within the 140 second deadline" },

  // Ours: Idempotency-Key on removebg (draft-ietf-httpapi-idempotency-key-header; DECISIONS.md)
  idempotency_key_in_use: { status: 409, title: "A request with this Idempotency-Key is still in progress" },
  idempotency_key_reused: { status: 422, title: "This Idempotency-Key was used for a different request" },
  idempotency_key_exhausted: { status: 422, title: "This Idempotency-Key's result was already sent again as often as it may be; a new call needs a new key" },

  // Product errors (spec §7) and the resendable 503 conditions (spec §7 Retry 4)
  deadline_unreachable: { status: 503, title: "Processing cannot start before the deadline" },
  key_queue_full: { status: 429, title: "Too many requests queued for this key" },
  inference_failed: { status: 500, title: "Processing failed" },
  queue_full: { status: 503, title: "The processing queue is full" },
  shutting_down: { status: 503, title: "The service is shutting down" },
  service_not_ready: { status: 503, title: "The service is starting up" },
  receive_budget_exhausted: { status: 503, title: "The processing service is receiving too much data" },
  model_unavailable: { status: 503, title: "The model is not available" },
  circuit_open: { status: 503, title: "The processing service is temporarily unavailable" },

  // Ours: routes outside the removebg table (operator API, unknown paths)
  unauthorized: { status: 401, title: "Missing or invalid operator token" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  conflict: { status: 409, title: "The request conflicts with the current state" },
  unsupported_media_type: { status: 415, title: "The body must be sent as application/json" },
  internal_error: { status: 500, title: "Internal error" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERRORS, code);
}

/** Product-side rejections that happened before processing began: the gateway resends these. */
export const RESENDABLE_CODES: ReadonlySet<string> = new Set([
  "deadline_unreachable",
  "queue_full",
  "shutting_down",
  "service_not_ready",
  "receive_budget_exhausted",
  "model_unavailable",
  "circuit_open",
  "key_queue_full",
]);
