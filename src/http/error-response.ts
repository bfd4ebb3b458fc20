// Renders the one error envelope of the spec: {"errors":[{"title","code"}]},
// always with X-PD-Request-Id, and Retry-After when the failure carries one. The only
// renderer: the gateway, the product service and the shared error handler all answer
// a Failure through failureResponse (or errorResponse, for a code without a value).
import type { Failure } from "./api-error.ts";
import { ERRORS, type ErrorCode } from "./error-catalogue.ts";
import { H } from "./headers.ts";

export function errorBody(code: ErrorCode, title?: string): string {
  return JSON.stringify({ errors: [{ title: title ?? ERRORS[code].title, code }] });
}

export function errorResponse(
  requestId: string,
  code: ErrorCode,
  title?: string,
  retryAfter?: number,
  extraHeaders?: Record<string, string>,
): Response {
  const headers = new Headers(extraHeaders);
  headers.set("content-type", "application/json; charset=utf-8");
  headers.set(H.requestId, requestId);
  if (retryAfter !== undefined) headers.set("retry-after", String(Math.max(1, Math.ceil(retryAfter))));
  const res = new Response(errorBody(code, title), { status: ERRORS[code].status, headers });
  // Tagged so the metrics and the access log learn the code without reading a copy of
  // the body (a stream tee costs ten times the rest of their work).
  Object.defineProperty(res, ERROR_CODE, { value: code });
  return res;
}

/** A failure value's answer; `extraHeaders` are the ones the route adds to every answer (e.g. X-PD-Test-Size). */
export function failureResponse(requestId: string, f: Failure, extraHeaders?: Record<string, string>): Response {
  return errorResponse(requestId, f.code, f.title, f.retryAfter, extraHeaders);
}

const ERROR_CODE = Symbol("pixeldrop.errorCode");

/** The catalogue code an answer built by errorResponse carries; undefined for any other answer. */
export function errorCodeOf(res: Response): ErrorCode | undefined {
  return (res as Response & { [ERROR_CODE]?: ErrorCode })[ERROR_CODE];
}
