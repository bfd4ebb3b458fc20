// The Pixeldrop client: one call to POST {baseUrl}/v1.0/removebg, following the spec's
// client contract (§7 Retry, items 6 and 7):
//   - a rejection before processing — a connection error (fetch threw, and not because
//     we aborted it), any 503, or a 429 with code key_queue_full — is sent again after
//     Retry-After seconds (10 when absent), at most `maxResends` (2) times;
//   - every other answer is final: 400, 401, 402, 403, 413, other 429s, 5xx but 503.
// Every call carries an Idempotency-Key (a new UUID per removeBackground call, the same
// on its resends), so two more cases are safe to send again: a 200 whose body broke
// off (the service answers again and charges nothing more) and 409
// idempotency_key_in_use (the first attempt is still running; after Retry-After).
// `timeoutMs` (150 s, the spec's minimum) bounds the whole call, resends and waits
// included, so a caller knows the longest it can take. A wait that would end after
// that point is not started: the last error is thrown at once, because the wait could
// only end in a timeout and the service's own answer (with its Retry-After) says more.
// Only fetch, FormData, Blob and AbortController are used: Node 20+, Deno, browsers.
import { abortableSleep, startDeadline, type Deadline } from "./deadline.ts";
import { PixeldropAbortError, PixeldropError, PixeldropNetworkError, PixeldropTimeoutError } from "./errors.ts";
import { encodeForm, envelopeOf, parseRetryAfter, resultOf, type ImageInput, type RemoveOptions, type RemoveResult } from "./wire.ts";
import { H } from "../http/headers.ts";

export const DEFAULT_TIMEOUT_MS = 150_000;
export const DEFAULT_MAX_RESENDS = 2;
/** Wait before a resend when the answer carries no Retry-After (spec §7 Retry 2, 7). */
export const DEFAULT_RETRY_AFTER_S = 10;
/**
 * Wait before sending again a keyed call whose 200 broke off: not a rejection (the work
 * is done and the replay only repeats it), so not the 10 s of item 7; a short pause.
 */
export const BROKEN_ANSWER_RESEND_S = 1;

export interface ClientOptions {
  /** A pd_live_ or pd_test_ key. Keep it on a server: never ship it in browser code. */
  apiKey: string;
  /** Where the service answers, e.g. http://127.0.0.1:8080 (no trailing /v1.0). */
  baseUrl: string;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Overall limit for one call, resends and waits included. Default 150 000. */
  timeoutMs?: number;
  /** Resends after a rejection before processing. Default 2 (3 attempts at most). */
  maxResends?: number;
  /** How the client waits between attempts; tests pass one that records the waits. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Clock in ms, used to decide whether a wait still fits in the timeout. */
  now?: () => number;
}

export interface CallOptions extends RemoveOptions {
  signal?: AbortSignal;
  /**
   * Idempotency-Key for this call (1–255 printable ASCII characters); by default a new
   * random UUID. Reuse one to retry a call whose answer was lost in your own code;
   * `false` sends none (a broken answer is then not sent again).
   */
  idempotencyKey?: string | false;
}

export interface PixeldropClient {
  /** Resolves with the cut-out, or rejects with a PixeldropError. */
  removeBackground(file: ImageInput, options?: CallOptions): Promise<RemoveResult>;
}

/** Whether an answer is a rejection before processing that the client sends again. */
export function isResendable(status: number, code: string): boolean {
  return status === 503 || (status === 429 && code === "key_queue_full");
}

export function createClient(o: ClientOptions): PixeldropClient {
  if (typeof o.apiKey !== "string" || o.apiKey === "") throw new TypeError("createClient: apiKey is required");
  if (typeof o.baseUrl !== "string" || !/^https?:\/\//.test(o.baseUrl)) throw new TypeError("createClient: baseUrl must be an http(s) URL");
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResends = o.maxResends ?? DEFAULT_MAX_RESENDS;
  if (!(timeoutMs > 0)) throw new TypeError("createClient: timeoutMs must be positive");
  if (!Number.isInteger(maxResends) || maxResends < 0) throw new TypeError("createClient: maxResends must be a whole number ≥ 0");
  const url = `${o.baseUrl.replace(/\/+$/, "")}/v1.0/removebg`;
  // Called through a wrapper: a browser's fetch must not be called as a method of another object.
  const send = o.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init));
  const sleep = o.sleep ?? abortableSleep;
  const now = o.now ?? Date.now;
  const apiKey = o.apiKey;

  return {
    async removeBackground(file, options = {}) {
      const deadline = startDeadline(timeoutMs, options.signal);
      const deadlineAt = now() + timeoutMs;
      const idempotencyKey = options.idempotencyKey === undefined ? crypto.randomUUID() : options.idempotencyKey;
      const keyed = idempotencyKey !== false;
      const headers: Record<string, string> = { "x-api-key": apiKey, ...(keyed ? { [H.idempotencyKey]: idempotencyKey } : {}) };
      try {
        const form = await encodeForm(file, options);
        for (let attempts = 1; ; attempts++) {
          if (deadline.firedBy) throw cutShort(deadline, attempts - 1);
          const outcome = await attempt(send, url, headers, form, deadline, attempts, now);
          if (!(outcome instanceof PixeldropError)) return outcome;
          const resendable =
            outcome.kind === "network"
              ? outcome.status === 0 || (keyed && outcome.status === 200)
              : outcome.kind === "response" && (isResendable(outcome.status, outcome.code) || (keyed && isKeyInUse(outcome.status, outcome.code)));
          if (!resendable || attempts > maxResends) throw outcome;
          const brokenAnswer = outcome.kind === "network" && outcome.status === 200;
          const waitMs = (outcome.retryAfter ?? (brokenAnswer ? BROKEN_ANSWER_RESEND_S : DEFAULT_RETRY_AFTER_S)) * 1000;
          if (now() + waitMs >= deadlineAt) throw outcome;
          try {
            await sleep(waitMs, deadline.signal);
          } catch (err) {
            if (deadline.firedBy) throw cutShort(deadline, attempts);
            throw err;
          }
        }
      } finally {
        deadline.dispose();
      }
    },
  };
}

/** The first call with this Idempotency-Key is still running: ask again after Retry-After. */
function isKeyInUse(status: number, code: string): boolean {
  return status === 409 && code === "idempotency_key_in_use";
}

/** One-off call without keeping a client. */
export function removeBackground(file: ImageInput, options: CallOptions & ClientOptions): Promise<RemoveResult> {
  return createClient(options).removeBackground(file, options);
}

/**
 * Sends once. Returns the result, or the error to throw or resend on; throws only when
 * the deadline fired (those errors end the call whatever the attempt count).
 */
async function attempt(
  send: NonNullable<ClientOptions["fetch"]>,
  url: string,
  headers: Record<string, string>,
  form: { body: Uint8Array<ArrayBuffer>; contentType: string },
  deadline: Deadline,
  attempts: number,
  now: () => number,
): Promise<RemoveResult | PixeldropError> {
  let res: Response;
  try {
    res = await send(url, {
      method: "POST",
      headers: { ...headers, "content-type": form.contentType },
      body: form.body,
      signal: deadline.signal,
    });
  } catch (err) {
    if (deadline.firedBy) throw cutShort(deadline, attempts);
    // No answer at all: a connection error, which the contract resends.
    return new PixeldropNetworkError({ title: "Could not reach the service", attempts, cause: err });
  }
  const requestId = res.headers.get(H.requestId) ?? undefined;
  try {
    if (res.ok) return resultOf(res, new Uint8Array(await res.arrayBuffer()));
    const { code, title } = await envelopeOf(res);
    const retryAfter = parseRetryAfter(res.headers.get("retry-after"), now());
    return new PixeldropError("response", { status: res.status, code, title, requestId, retryAfter, attempts });
  } catch (err) {
    if (deadline.firedBy) throw cutShort(deadline, attempts, res.status, requestId);
    // The answer broke off while its body was read. After a 200 the image was already
    // made (and charged): without an Idempotency-Key this is final (status ≠ 0); with
    // one the resend is answered again and charged nothing more.
    return new PixeldropNetworkError({ status: res.status, title: "The connection broke while the answer was read", requestId, attempts, cause: err });
  }
}

function cutShort(deadline: Deadline, attempts: number, status?: number, requestId?: string): PixeldropError {
  if (deadline.firedBy === "caller") return new PixeldropAbortError({ attempts, status, requestId, cause: deadline.callerReason });
  return new PixeldropTimeoutError({ attempts, status, requestId });
}
