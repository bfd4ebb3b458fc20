// Expected failures travel as values (Failure); only the HTTP layer turns them into
// responses. ApiError exists for the few places (validators, middleware) where
// throwing is the natural way out; onError renders it the same way.
import { ERRORS, type ErrorCode } from "./error-catalogue.ts";

export interface Failure {
  ok: false;
  code: ErrorCode;
  /** Overrides the catalogue title, e.g. to name the limit that was hit. */
  title?: string;
  /** Seconds, sent as Retry-After. */
  retryAfter?: number;
}

export function fail(code: ErrorCode, title?: string, retryAfter?: number): Failure {
  const f: Failure = { ok: false, code };
  if (title !== undefined) f.title = title;
  if (retryAfter !== undefined) f.retryAfter = retryAfter;
  return f;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly title: string;
  readonly retryAfter?: number;
  constructor(code: ErrorCode, title?: string, retryAfter?: number) {
    super(title ?? ERRORS[code].title);
    this.code = code;
    this.title = title ?? ERRORS[code].title;
    this.retryAfter = retryAfter;
  }
  static from(f: Failure): ApiError {
    return new ApiError(f.code, f.title, f.retryAfter);
  }
  /** The value it carries, for the one renderer (src/http/error-response.ts). */
  failure(): Failure {
    return fail(this.code, this.title, this.retryAfter);
  }
}
