// Descriptions of the response headers, keyed by the names the code sends
// (src/http/headers.ts), so a renamed header breaks the build of the document.
import { H } from "../http/headers.ts";
import type { JsonSchema } from "./model.ts";

const int = (minimum = 0): JsonSchema => ({ type: "integer", minimum });

export const HEADER_DOCS = {
  [H.requestId]: { description: "Request ID, on every response. Quote it in support requests.", schema: { type: "string", pattern: "^req_[0-9a-z]{26}$" } },
  [H.chargedKrw]: { description: "Amount deducted by this request, in KRW (successful live-key response).", schema: int() },
  [H.balanceKrw]: { description: "Organization balance after the deduction, in KRW (successful live-key response).", schema: int() },
  [H.testSize]: { description: "Always `preview`: output size of a test key (every response to a recognised test key, errors included).", schema: { type: "string", const: "preview" } },
  [H.testRemaining]: { description: "Free test calls left this month, or for life for an operator-reduced organization (every response to a recognised test key).", schema: int() },
  [H.width]: { description: "Width of the result image, in pixels.", schema: int(1) },
  [H.height]: { description: "Height of the result image, in pixels.", schema: int(1) },
  [H.processingMs]: { description: "Processing time in the product service, in milliseconds.", schema: int() },
  [H.fgTop]: { description: "Top edge of the foreground's bounding box in the result (alpha ≥ 50 %), in pixels.", schema: int() },
  [H.fgLeft]: { description: "Left edge of the foreground's bounding box in the result, in pixels.", schema: int() },
  [H.fgWidth]: { description: "Width of the foreground's bounding box in the result, in pixels.", schema: int() },
  [H.fgHeight]: { description: "Height of the foreground's bounding box in the result, in pixels.", schema: int() },
  [H.replayed]: { description: "`true` when the answer replays an earlier successful call with the same Idempotency-Key: nothing more was charged (X-PD-Charged-KRW: 0).", schema: { type: "string", const: "true" } },
  "Retry-After": { description: "Seconds to wait before sending again (409, 429 and 503 answers that can clear by themselves).", schema: int(1) },
  Allow: { description: "The methods this path accepts.", schema: { type: "string" } },
  "Cache-Control": { description: "`no-store`: the answer carries key text shown only once.", schema: { type: "string", const: "no-store" } },
  "WWW-Authenticate": { description: "`Bearer`: the operator API expects a bearer token.", schema: { type: "string", const: "Bearer" } },
} as const satisfies Record<string, { description: string; schema: JsonSchema }>;

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
];

/** Component name of a header: "X-PD-Request-Id" → "XPdRequestId". */
export function headerComponentName(name: string): string {
  return name
    .split("-")
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1).toLowerCase())
    .join("");
}
