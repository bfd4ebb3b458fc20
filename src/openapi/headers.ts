// Descriptions of the response headers, keyed by the names the code sends
// (src/http/headers.ts), so a renamed header breaks the build of the document.
// `required: true` marks a header sent on every answer that lists it (the document's
// header components carry it, so a validator catches an answer without one); the rest
// depend on the key or the condition their description names.
import { TEST_KEY_SIZE } from "../gateway/test-key.ts";
import { H } from "../http/headers.ts";
import { REQUEST_ID_PATTERN } from "../http/request-id.ts";
import { UNCERTAIN_IN, UNCERTAIN_OUT } from "../engine/imaging/uncertainty.ts";
import type { JsonSchema } from "./model.ts";

const int = (minimum = 0): JsonSchema => ({ type: "integer", minimum });

export const HEADER_DOCS = {
  [H.requestId]: { description: "Request ID, on every response. Quote it in support requests.", schema: { type: "string", pattern: REQUEST_ID_PATTERN.source }, required: true },
  [H.chargedKrw]: { description: "Amount deducted by this request, in KRW (successful live-key response).", schema: int() },
  [H.balanceKrw]: { description: "Organization balance after the deduction, in KRW (successful live-key response).", schema: int() },
  [H.testSize]: { description: `Always \`${TEST_KEY_SIZE}\`: output size of a test key (every response to a recognised test key, errors included).`, schema: { type: "string", const: TEST_KEY_SIZE } },
  [H.testRemaining]: { description: "Free test calls left this month, or for life for an operator-reduced organization (every response to a recognised test key).", schema: int() },
  [H.width]: { description: "Width of the result image, in pixels.", schema: int(1), required: true },
  [H.height]: { description: "Height of the result image, in pixels.", schema: int(1), required: true },
  [H.processingMs]: { description: "Processing time in the product service, in milliseconds.", schema: int(), required: true },
  [H.fgTop]: { description: "Top edge of the foreground's bounding box in the result (alpha ≥ 50 %), in pixels.", schema: int(), required: true },
  [H.fgLeft]: { description: "Left edge of the foreground's bounding box in the result, in pixels.", schema: int(), required: true },
  [H.fgWidth]: { description: "Width of the foreground's bounding box in the result, in pixels.", schema: int(), required: true },
  [H.fgHeight]: { description: "Height of the foreground's bounding box in the result, in pixels.", schema: int(), required: true },
  [H.model]: {
    description: "Beyond the spec: the model and its version that made the cut-out, `name/version` (e.g. `isnet-int8-static/1.4.5`), so results can be told apart after a model change.",
    schema: { type: "string", pattern: "^[!-~]+/[!-~]+$" },
  },
  [H.modelInput]: {
    description:
      "Beyond the spec: the size the model was fed for this image, `WIDTHxHEIGHT` (e.g. `896x896`). The whole picture is resized to it, whatever the output size; smaller pictures get a smaller input (docs/MODEL.md, \"The input size\").",
    schema: { type: "string", pattern: "^[1-9][0-9]*x[1-9][0-9]*$" },
  },
  [H.uncertainty]: {
    description:
      "Beyond the spec: how unsure the mask is about the subject's outline, 0 (sure) to 1 (unsure). Of the pixels the mask gives " +
      `any weight (above ${UNCERTAIN_OUT}/255), the share that is neither clearly background nor clearly subject (below ${UNCERTAIN_IN}/255); ` +
      "1 when no subject was found. Use it to route results above a threshold you pick (e.g. 0.3) to human review.",
    schema: { type: "number", minimum: 0, maximum: 1 },
  },
  [H.rateLimit]: {
    description:
      "Beyond the spec, as the mirrored API sends it, on every answer to a recognised key. Test key: calls allowed per minute (10). " +
      "Live key: the tightest spending limit that applies (organization daily, app daily or app monthly), in KRW.",
    schema: int(),
  },
  [H.rateRemaining]: { description: "What is left of X-RateLimit-Limit after this call: calls (test key) or KRW (live key).", schema: int() },
  [H.rateReset]: {
    description: "Unix time in seconds at which X-RateLimit-Remaining is back to X-RateLimit-Limit: when the newest call leaves the minute window (test key), the next 00:00 KST or 1st of the month (live key).",
    schema: int(),
  },
  [H.replayed]: { description: "`true` when the answer replays an earlier successful call with the same Idempotency-Key: nothing more was charged (X-PD-Charged-KRW: 0).", schema: { type: "string", const: "true" } },
  "Retry-After": { description: "Seconds to wait before sending again (409, 429 and 503 answers that can clear by themselves).", schema: int(1) },
  Allow: { description: "The methods this path accepts.", schema: { type: "string" } },
  "Cache-Control": { description: "`no-store`: the answer carries key text shown only once.", schema: { type: "string", const: "no-store" }, required: true },
  "WWW-Authenticate": { description: "`Bearer`: the operator API expects a bearer token.", schema: { type: "string", const: "Bearer" }, required: true },
} as const satisfies Record<string, { description: string; schema: JsonSchema; required?: true }>;

export type HeaderName = keyof typeof HEADER_DOCS;

/** Success headers of a cut-out, in the order the spec lists them, then ours. */
export const IMAGE_HEADERS: HeaderName[] = [
  H.requestId,
  H.chargedKrw,
  H.balanceKrw,
  H.testSize,
  H.testRemaining,
  H.width,
  H.height,
  H.processingMs,
  H.fgTop,
  H.fgLeft,
  H.fgWidth,
  H.fgHeight,
  H.model,
  H.modelInput,
  H.uncertainty,
  H.rateLimit,
  H.rateRemaining,
  H.rateReset,
];

/** On every answer to a recognised key, errors included. */
export const RATE_LIMIT_HEADERS: HeaderName[] = [H.rateLimit, H.rateRemaining, H.rateReset];

/** Component name of a header: "X-PD-Request-Id" → "XPdRequestId". */
export function headerComponentName(name: string): string {
  return name
    .split("-")
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1).toLowerCase())
    .join("");
}
