// Idempotency-Key on POST /v1.0/removebg (draft-ietf-httpapi-idempotency-key-header,
// with Stripe's behaviour; decisions in docs/DECISIONS.md "Idempotency-Key"):
// - the key is optional, 1–255 printable ASCII characters, scoped to the app, kept 24 h;
// - the first request with a key runs as usual; the same key with the same request
//   (same form fields, the image by its SHA-256) after a success is answered again
//   (the model runs again) with X-PD-Charged-KRW: 0 and Idempotent-Replayed: true,
//   but only where a first call would run (removebg.ts: its hold or free call is
//   taken and given back) and at most IDEMPOTENCY_MAX_REPLAYS times (then 422
//   idempotency_key_exhausted): a replay is never free compute;
// - the same key with another request: 422 idempotency_key_reused; while the first
//   is still running (or its charge is being settled): 409 idempotency_key_in_use;
// - a request that ends in an error keeps nothing: its claim is given back (one whose
//   claim met a store error too, by the reconciler: src/billing/given-back.ts).
import type { IdempotencyClaims } from "../billing/idempotency.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { H } from "../http/headers.ts";
import type { Form } from "../http/multipart.ts";

export const IDEMPOTENCY_HEADER = H.idempotencyKey;
export const REPLAYED_HEADER = H.replayed;
export const IDEMPOTENCY_KEY_MAX = 255;
/** Retry-After of 409: the first request is seconds from its end; ask again soon. */
export const IN_USE_RETRY_AFTER_S = 2;

/** What the gateway needs from the store: the claims src/billing/idempotency.ts defines and keeps. */
export type IdempotencyPort = IdempotencyClaims;

// Printable ASCII (0x21–0x7E) plus inner spaces; leading and trailing spaces are not
// part of a header value anyway.
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The header's key, undefined when absent, or a 400 for a malformed one. */
export function readIdempotencyKey(headers: Headers): { ok: true; key: string | undefined } | Failure {
  const raw = headers.get(IDEMPOTENCY_HEADER);
  if (raw === null) return { ok: true, key: undefined };
  // The draft's value is a Structured Fields string ("…"); bare tokens are accepted too.
  const key = /^".*"$/.test(raw) ? raw.slice(1, -1) : raw;
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX || !KEY_PATTERN.test(key)) {
    return fail("invalid_parameter", `${IDEMPOTENCY_HEADER} must be 1–${IDEMPOTENCY_KEY_MAX} printable ASCII characters`);
  }
  return { ok: true, key };
}

/**
 * What "the same request" means: the same key kind and the same form fields, names
 * and values, the image compared by its SHA-256. Order and the multipart boundary do
 * not matter (a client building the form again gets a new boundary).
 */
export async function requestFingerprint(kind: "test" | "live", form: Form): Promise<string> {
  const parts: string[] = [];
  for (const [name, value] of form.entries) {
    const v = typeof value === "string" ? `s:${value.trim()}` : `f:${await sha256Hex(value.bytes)}`;
    parts.push(`${name}=${v}`);
  }
  parts.sort();
  return sha256Hex(new TextEncoder().encode(`${kind}\n${parts.join("\n")}`));
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The answer for a claim that does not run as a first request (replay is handled by the caller). */
export function claimFailure(outcome: "mismatch" | "in_use" | "given_back" | "exhausted"): Failure {
  switch (outcome) {
    // given_back reaches no client: the claim statement ran after its call was answered 503.
    case "given_back":
      return fail("service_unavailable", "This request's claim was given back");
    case "mismatch":
      return fail("idempotency_key_reused", `This ${IDEMPOTENCY_HEADER} was used for a different request`);
    case "exhausted":
      return fail("idempotency_key_exhausted", `This ${IDEMPOTENCY_HEADER}'s result was already sent again as often as it may be; a new call needs a new key`);
    case "in_use":
      return fail("idempotency_key_in_use", `A request with this ${IDEMPOTENCY_HEADER} is still in progress`, IN_USE_RETRY_AFTER_S);
  }
}

/** The request a claim is made for. */
export interface ClaimingRequest {
  requestId: string;
  receivedAt: number;
}

export interface Claim {
  ok: true;
  /** A replay of a request that already succeeded: it is charged nothing. */
  replay: boolean;
  /** Marks the key's request done, or counts a replay as answered (after a success); never throws. */
  complete(): Promise<void>;
  /** Gives a fresh claim back (forgets the key) for a request that did not succeed. */
  giveBack(): Promise<void>;
}

/**
 * Reads the header and claims the key for this request. Without a key the request
 * runs as before. A fresh claim is given back when the request does not succeed, so a
 * key on a failed request keeps nothing.
 */
export async function claimIdempotency(
  req: Request,
  c: { appId: string; kind: "test" | "live"; form: Form; leaseMs: number },
  r: ClaimingRequest,
  port: IdempotencyPort,
  log: (e: Record<string, unknown>) => void,
): Promise<Claim | Failure> {
  const header = readIdempotencyKey(req.headers);
  if (!header.ok) return header;
  const nothing = async () => {};
  if (header.key === undefined) return { ok: true, replay: false, complete: nothing, giveBack: nothing };
  const ref = { appId: c.appId, key: header.key, requestId: r.requestId };
  const fingerprint = await requestFingerprint(c.kind, c.form);
  const outcome = await port.claim({ ...ref, fingerprint, leaseUntil: r.receivedAt + c.leaseMs });
  if (outcome !== "fresh" && outcome !== "replay") return claimFailure(outcome);
  const warnUnwritten = (what: string) => (err: unknown) =>
    log({ level: "warn", msg: `idempotency ${what} not written`, requestId: r.requestId, err: err instanceof Error ? err.message : String(err) });
  // A replay counts once it is answered: one refused on the way (402, 429) uses none.
  // A count lost to a store error gives one replay more, never a charge.
  if (outcome === "replay") return { ok: true, replay: true, complete: () => port.countReplay(ref).catch(warnUnwritten("replay count")), giveBack: nothing };
  return {
    ok: true,
    replay: false,
    giveBack: () => port.forget(ref),
    // A live key's captured hold says the same (pd_idempotency_claim reads it).
    complete: () => port.complete(ref).catch(warnUnwritten("completion")),
  };
}
