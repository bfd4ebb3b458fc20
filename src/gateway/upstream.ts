// Calls the product within the request's overall deadline and resends only what the
// spec allows: rejections before processing (the product unreachable, the listed 503
// codes, 429 key_queue_full), at most maxResends times, waiting Retry-After (or the
// default) and only while enough of the deadline remains. The same rules whichever
// way the product is reached: in-process (src/wiring/in-process-product.ts) or over
// HTTP (product-http.ts); both bring their answers through `productRefusal`.
import { fail, type Failure } from "../http/api-error.ts";
import { ERRORS, isErrorCode, RESENDABLE_CODES } from "../http/error-catalogue.ts";
import type { ProductJob, ProductResult } from "../product/job.ts";

/** The cut-out and its facts, as the gateway delivers and charges them. */
export type ProductImage = ProductResult;

/** One attempt's answer; `resendable` marks a rejection before processing. */
export type ProductAnswer = { ok: true; image: ProductImage } | { ok: false; failure: Failure; resendable: boolean };

/**
 * Sends one attempt of a job to the product. Rejects when the product could not be
 * reached (nothing was processed). `wire` is the client's form as received, for a
 * product behind HTTP; `forcedSize` says the job's size was the gateway's choice.
 */
export type ProductPort = (call: ProductCallInput, signal: AbortSignal) => Promise<ProductAnswer>;

export interface ProductCallInput {
  job: ProductJob;
  wire: { body: Uint8Array<ArrayBuffer>; contentType: string };
  forcedSize: boolean;
}

/** Error codes the product service answers with (spec §7 product errors and resend conditions). */
const PRODUCT_CODES: ReadonlySet<string> = new Set([
  "invalid_parameter",
  "unsupported_parameter",
  "file_too_large",
  "inference_failed",
  ...RESENDABLE_CODES,
]);

/**
 * A product refusal as the gateway takes it, `status` being the HTTP status it came
 * with (in process: its code's own). Only the product's own codes pass through; anything
 * else (a gateway code, a typo) means the answer cannot be trusted.
 */
export function productRefusal(code: unknown, title: unknown, status: number, retryAfter: number | undefined): ProductAnswer {
  if (!isErrorCode(code) || !PRODUCT_CODES.has(code)) {
    return { ok: false, failure: fail("upstream_error", "The processing service returned a malformed error"), resendable: false };
  }
  // The product's title says what was wrong with the input (e.g. its size and the limit).
  const t = typeof title === "string" && title.length > 0 ? title.slice(0, 300) : undefined;
  const beforeProcessing = (status === 503 || (status === 429 && code === "key_queue_full")) && RESENDABLE_CODES.has(code);
  return { ok: false, failure: fail(code, t, retryAfter), resendable: beforeProcessing };
}

/** The same, for a Failure value handed over in process. */
export function inProcessRefusal(f: Failure): ProductAnswer {
  return productRefusal(f.code, f.title, ERRORS[f.code].status, f.retryAfter);
}

/** An answer that is not what a product sends. */
export function malformedAnswer(): ProductAnswer {
  return { ok: false, failure: fail("upstream_error", "The processing service returned a malformed result"), resendable: false };
}

export interface UpstreamOptions {
  deadlineAt: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  maxResends: number;
  minRemainingMs: number;
  defaultWaitS: number;
  /** Told of each attempt that is about to be sent again (metrics count resends by code). */
  onResend?: (code: string) => void;
}

export type UpstreamOutcome = { ok: true; image: ProductImage; attempts: number } | (Failure & { attempts: number });

type Attempt =
  | { kind: "ok"; image: ProductImage }
  | { kind: "resendable"; failure: Failure; waitS: number }
  | { kind: "final"; failure: Failure };

export async function callProduct(call: (signal: AbortSignal) => Promise<ProductAnswer>, o: UpstreamOptions): Promise<UpstreamOutcome> {
  let attempts = 0;
  for (;;) {
    attempts++;
    const attempt = await attemptOnce(call, o);
    if (attempt.kind === "ok") return { ok: true, image: attempt.image, attempts };
    if (attempt.kind === "final") return { ...attempt.failure, attempts };
    const resendsDone = attempts - 1;
    const waitMs = attempt.waitS * 1000;
    const remainingAfterWait = o.deadlineAt - o.now() - waitMs;
    if (resendsDone >= o.maxResends || remainingAfterWait < o.minRemainingMs) {
      return { ...attempt.failure, attempts };
    }
    o.onResend?.(attempt.failure.code);
    await o.sleep(waitMs);
  }
}

async function attemptOnce(call: (signal: AbortSignal) => Promise<ProductAnswer>, o: UpstreamOptions): Promise<Attempt> {
  const remaining = o.deadlineAt - o.now();
  if (remaining <= 0) return { kind: "final", failure: timeout() };
  const ctrl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctrl.abort();
  }, remaining);
  try {
    let answer: ProductAnswer;
    try {
      answer = await Promise.race([
        call(ctrl.signal),
        new Promise<never>((_, reject) => ctrl.signal.addEventListener("abort", () => reject(new Error("deadline")))),
      ]);
    } catch {
      if (timedOut) return { kind: "final", failure: timeout() };
      // Never reached the product: a resendable rejection before processing.
      return { kind: "resendable", failure: fail("upstream_error", "The processing service could not be reached"), waitS: o.defaultWaitS };
    }
    if (timedOut) return { kind: "final", failure: timeout() };
    if (answer.ok) return { kind: "ok", image: answer.image };
    if (answer.resendable) return { kind: "resendable", failure: answer.failure, waitS: answer.failure.retryAfter ?? o.defaultWaitS };
    return { kind: "final", failure: answer.failure };
  } finally {
    clearTimeout(timer);
  }
}

function timeout(): Failure {
  return fail("upstream_timeout", "No result within the 140 second deadline; set your client timeout to at least 150 seconds");
}
