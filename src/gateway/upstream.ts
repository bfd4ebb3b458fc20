// Calls the product service within the request's overall deadline and resends only
// what the spec allows: rejections before processing (connection error, the listed
// 503 codes, 429 key_queue_full), at most maxResends times, waiting Retry-After (or
// the default) and only while enough of the deadline remains.
import { fail, type Failure } from "../http/api-error.ts";
import { isErrorCode, RESENDABLE_CODES } from "../http/error-catalogue.ts";
import { H } from "../http/headers.ts";

export type ProductCall = (signal: AbortSignal) => Promise<Response>;

/** Error codes the product service answers with (spec §7 product errors and resend conditions). */
const PRODUCT_CODES: ReadonlySet<string> = new Set([
  "invalid_parameter",
  "unsupported_parameter",
  "file_too_large",
  "inference_failed",
  ...RESENDABLE_CODES,
]);

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

export interface ProductImage {
  png: Uint8Array<ArrayBuffer>;
  width: number;
  height: number;
  processingMs: number;
  foreground: { top: number; left: number; width: number; height: number };
  model?: string;
  uncertainty?: number;
}

export type UpstreamOutcome = { ok: true; image: ProductImage; attempts: number } | (Failure & { attempts: number });

type Attempt =
  | { kind: "ok"; image: ProductImage }
  | { kind: "resendable"; failure: Failure; waitS: number }
  | { kind: "final"; failure: Failure };

export async function callProduct(call: ProductCall, o: UpstreamOptions): Promise<UpstreamOutcome> {
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

async function attemptOnce(call: ProductCall, o: UpstreamOptions): Promise<Attempt> {
  const remaining = o.deadlineAt - o.now();
  if (remaining <= 0) return { kind: "final", failure: timeout() };
  const ctrl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctrl.abort();
  }, remaining);
  try {
    let res: Response;
    try {
      res = await Promise.race([
        call(ctrl.signal),
        new Promise<never>((_, reject) => ctrl.signal.addEventListener("abort", () => reject(new Error("deadline")))),
      ]);
    } catch {
      if (timedOut) return { kind: "final", failure: timeout() };
      // Never reached the product: a resendable rejection before processing.
      return { kind: "resendable", failure: fail("upstream_error", "The processing service could not be reached"), waitS: o.defaultWaitS };
    }
    return await readAnswer(res, o.defaultWaitS, () => timedOut);
  } finally {
    clearTimeout(timer);
  }
}

function timeout(): Failure {
  return fail("upstream_timeout", "No result within the 140 second deadline; set your client timeout to at least 150 seconds");
}

async function readAnswer(res: Response, defaultWaitS: number, timedOut: () => boolean): Promise<Attempt> {
  if (res.status === 200) {
    const image = await readImage(res).catch(() => undefined);
    if (timedOut()) return { kind: "final", failure: timeout() };
    if (!image) return { kind: "final", failure: fail("upstream_error", "The processing service returned a malformed result") };
    return { kind: "ok", image };
  }
  const first = await res
    .json()
    .then((b: unknown) => (b as { errors?: { code?: unknown; title?: unknown }[] })?.errors?.[0])
    .catch(() => undefined);
  const code = first?.code;
  // Only the product's own codes pass through; anything else (a gateway code, a typo)
  // means the answer cannot be trusted.
  if (!isErrorCode(code) || !PRODUCT_CODES.has(code)) {
    return { kind: "final", failure: fail("upstream_error", "The processing service returned a malformed error") };
  }
  // The product's title says what was wrong with the input (e.g. its size and the limit).
  const title = typeof first?.title === "string" && first.title.length > 0 ? first.title.slice(0, 300) : undefined;
  const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
  const beforeProcessing = (res.status === 503 || (res.status === 429 && code === "key_queue_full")) && RESENDABLE_CODES.has(code);
  const failure = fail(code, title, retryAfter);
  if (beforeProcessing) return { kind: "resendable", failure, waitS: retryAfter ?? defaultWaitS };
  return { kind: "final", failure };
}

async function readImage(res: Response): Promise<ProductImage | undefined> {
  if (!(res.headers.get("content-type") ?? "").startsWith("image/png")) return undefined;
  const num = (name: string) => {
    const v = Number(res.headers.get(name));
    return Number.isInteger(v) && v >= 0 ? v : undefined;
  };
  const width = num(H.width);
  const height = num(H.height);
  if (!width || !height) return undefined;
  const png = new Uint8Array(await res.arrayBuffer());
  // A PNG starts with its 8-byte signature; anything else is a malformed answer.
  if (png.length < 8 || png[0] !== 0x89 || png[1] !== 0x50 || png[2] !== 0x4e || png[3] !== 0x47) return undefined;
  // The price follows the output's pixels, so the size headers must be the PNG's own,
  // and a PNG cut short (no IEND) must not be delivered and charged (found by test/faults).
  if (!isWholePngOf(png, width, height)) return undefined;
  return {
    png,
    width,
    height,
    processingMs: num(H.processingMs) ?? 0,
    foreground: { top: num(H.fgTop) ?? 0, left: num(H.fgLeft) ?? 0, width: num(H.fgWidth) ?? 0, height: num(H.fgHeight) ?? 0 },
    ...passedOn(res),
  };
}

/** The product's model and uncertainty headers, handed on only when well formed. */
function passedOn(res: Response): { model?: string; uncertainty?: number } {
  const model = res.headers.get(H.model) ?? "";
  const u = Number(res.headers.get(H.uncertainty) ?? "x");
  return {
    ...(/^[\x21-\x7e]{1,100}$/.test(model) ? { model } : {}),
    ...(Number.isFinite(u) && u >= 0 && u <= 1 ? { uncertainty: u } : {}),
  };
}

/** IHDR (always the first chunk) holds `width`×`height`, and the file ends with the IEND chunk. */
function isWholePngOf(png: Uint8Array, width: number, height: number): boolean {
  if (png.length < 8 + 25 + 12) return false;
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const ihdr = view.getUint32(12) === 0x49484452; // "IHDR"
  const iend = view.getUint32(png.length - 12) === 0 && view.getUint32(png.length - 8) === 0x49454e44; // length 0, "IEND"
  return ihdr && iend && view.getUint32(16) === width && view.getUint32(20) === height;
}

export function parseRetryAfter(v: string | null): number | undefined {
  if (v === null || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v);
}
