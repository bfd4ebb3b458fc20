// Renders the one error envelope of the spec: {"errors":[{"title","code"}]},
// always with X-PD-Request-Id, and Retry-After when the failure carries one.
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

const ERROR_CODE = Symbol("pixeldrop.errorCode");

/** The catalogue code an answer built by errorResponse carries; undefined for any other answer. */
export function errorCodeOf(res: Response): ErrorCode | undefined {
  return (res as Response & { [ERROR_CODE]?: ErrorCode })[ERROR_CODE];
}
