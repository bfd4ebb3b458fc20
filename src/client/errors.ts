// The errors the client throws. Every failure is a PixeldropError, so one
// `instanceof` catches them all; `kind` (and the subclass) says whether the service
// answered (an error response), never answered (network), or the wait was cut short
// (our timeout, or the caller's signal). The API key never appears in a message.

export type PixeldropErrorKind = "response" | "network" | "timeout" | "aborted";

export interface PixeldropErrorFields {
  /** HTTP status of the answer; 0 when no answer was received. */
  status: number;
  /** The service's error code, or `unknown` for an answer without the JSON envelope,
   *  `network_error`, `timeout` or `aborted` when there was no usable answer. */
  code: string;
  title: string;
  /** X-PD-Request-Id of the answer, to quote in support requests. */
  requestId?: string;
  /** Retry-After of the answer, in seconds. */
  retryAfter?: number;
  /** Requests sent in all (1 + resends). */
  attempts: number;
  cause?: unknown;
}

export class PixeldropError extends Error {
  readonly kind: PixeldropErrorKind;
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly requestId?: string;
  readonly retryAfter?: number;
  readonly attempts: number;

  constructor(kind: PixeldropErrorKind, f: PixeldropErrorFields) {
    super(describe(f), f.cause === undefined ? undefined : { cause: f.cause });
    this.name = "PixeldropError";
    this.kind = kind;
    this.status = f.status;
    this.code = f.code;
    this.title = f.title;
    if (f.requestId !== undefined) this.requestId = f.requestId;
    if (f.retryAfter !== undefined) this.retryAfter = f.retryAfter;
    this.attempts = f.attempts;
  }
}

/** The connection failed (refused, reset, DNS) before an answer arrived, or while its body was read. */
export class PixeldropNetworkError extends PixeldropError {
  constructor(f: Omit<PixeldropErrorFields, "status" | "code"> & { status?: number }) {
    super("network", { ...f, status: f.status ?? 0, code: "network_error" });
    this.name = "PixeldropNetworkError";
  }
}

/** The client's overall timeout (timeoutMs) ran out. */
export class PixeldropTimeoutError extends PixeldropError {
  constructor(f: Omit<PixeldropErrorFields, "status" | "code" | "title"> & { status?: number }) {
    super("timeout", { ...f, status: f.status ?? 0, code: "timeout", title: "No answer within the client timeout" });
    this.name = "PixeldropTimeoutError";
  }
}

/** The caller's AbortSignal fired; `cause` is the signal's reason. */
export class PixeldropAbortError extends PixeldropError {
  constructor(f: Omit<PixeldropErrorFields, "status" | "code" | "title"> & { status?: number }) {
    super("aborted", { ...f, status: f.status ?? 0, code: "aborted", title: "The request was aborted by the caller" });
    this.name = "PixeldropAbortError";
  }
}

function describe(f: PixeldropErrorFields): string {
  const where = [f.status ? `HTTP ${f.status}` : undefined, f.requestId ? `request ${f.requestId}` : undefined]
    .filter(Boolean)
    .join(", ");
  return `${f.code}: ${f.title}${where ? ` (${where})` : ""}`;
}
