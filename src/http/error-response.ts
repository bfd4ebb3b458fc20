// Renders the one error envelope of the spec: {"errors":[{"title","code"}]},
// always with X-PD-Request-Id, and Retry-After when the failure carries one. The only
// renderer: the gateway, the product service and the shared error handler all answer
// a Failure through failureResponse (or errorResponse, for a code without a value).
//
// Refusals are what a flood of bad traffic gets, so an answer costs little: its body is
// rendered once per code and title, and its headers are a plain record (lower-case
// names), which @hono/node-server writes as they are; a Headers object is only made if
// something later reads or changes them. The answer carries its code and request ID as
// tags, so the metrics, the access log and the request-ID middleware read them without
// reading the headers or a copy of the body; the security-header middleware reads the
// headers it was made with.
import type { Failure } from "./api-error.ts";
import { ERRORS, type ErrorCode } from "./error-catalogue.ts";
import { H } from "./headers.ts";

/** Rendered bodies by code, then by title ("" for the catalogue's); a title built from input (a path) could make many, hence the cap. */
const BODIES = new Map<ErrorCode, Map<string, string>>();
const TITLES_KEPT_PER_CODE = 64;

export function errorBody(code: ErrorCode, title?: string): string {
  let byTitle = BODIES.get(code);
  if (byTitle === undefined) BODIES.set(code, (byTitle = new Map()));
  const key = title ?? "";
  let body = byTitle.get(key);
  if (body === undefined) {
    body = JSON.stringify({ errors: [{ title: title ?? ERRORS[code].title, code }] });
    if (byTitle.size >= TITLES_KEPT_PER_CODE) byTitle.clear();
    byTitle.set(key, body);
  }
  return body;
}

const CONTENT_TYPE = "application/json; charset=utf-8";
const REQUEST_ID = H.requestId.toLowerCase();

export function errorResponse(
  requestId: string,
  code: ErrorCode,
  title?: string,
  retryAfter?: number,
  extraHeaders?: Record<string, string>,
): Response {
  const headers: Record<string, string> = {};
  if (extraHeaders) for (const name in extraHeaders) headers[name.toLowerCase()] = extraHeaders[name]!;
  headers["content-type"] = CONTENT_TYPE;
  headers[REQUEST_ID] = requestId;
  if (retryAfter !== undefined) headers["retry-after"] = String(Math.max(1, Math.ceil(retryAfter)));
  const res = new Response(errorBody(code, title), { status: ERRORS[code].status, headers }) as Tagged;
  res[ERROR_CODE] = code;
  res[REQUEST_ID_SENT] = requestId;
  res[HEADERS_MADE] = headers;
  return res;
}

/** A failure value's answer; `extraHeaders` are the ones the route adds to every answer (e.g. X-PD-Test-Size). */
export function failureResponse(requestId: string, f: Failure, extraHeaders?: Record<string, string>): Response {
  return errorResponse(requestId, f.code, f.title, f.retryAfter, extraHeaders);
}

const ERROR_CODE = Symbol("pixeldrop.errorCode");
const REQUEST_ID_SENT = Symbol("pixeldrop.requestId");
const HEADERS_MADE = Symbol("pixeldrop.headersMade");
type Tagged = Response & { [ERROR_CODE]?: ErrorCode; [REQUEST_ID_SENT]?: string; [HEADERS_MADE]?: Readonly<Record<string, string>> };

/** The catalogue code an answer built by errorResponse carries; undefined for any other answer. */
export function errorCodeOf(res: Response): ErrorCode | undefined {
  return (res as Tagged)[ERROR_CODE];
}

/** The X-PD-Request-Id errorResponse gave the answer; undefined for any other answer. */
export function requestIdOf(res: Response): string | undefined {
  return (res as Tagged)[REQUEST_ID_SENT];
}

/** The headers errorResponse made the answer with (names in lower case); undefined for any other answer. */
export function headerRecordOf(res: Response): Readonly<Record<string, string>> | undefined {
  return (res as Tagged)[HEADERS_MADE];
}
