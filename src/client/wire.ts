// What goes over the wire for one removebg call: the multipart body out, and the
// result or the error envelope back, read from the headers the spec lists (§4, §7).
import { H } from "../http/headers.ts";

/** The sizes the service accepts (spec §4); preview, small, regular bill at 22 KRW, the rest at 110. */
export type RemoveSize = "preview" | "small" | "regular" | "auto" | "full";

export interface RemoveOptions {
  size?: RemoveSize;
  type?: "product" | "auto";
  format?: "png" | "auto";
  semitransparency?: boolean;
  /** Beyond the spec: "alpha" returns the mask alone as a greyscale PNG. Default "rgba". */
  channels?: "rgba" | "alpha";
  /** Beyond the spec: a colour to lay the cut-out over: hex (with or without '#', optional alpha) or a CSS colour name. */
  bgColor?: string;
}

export type ImageInput = Blob | Uint8Array | ArrayBuffer;

export interface RemoveResult {
  /** The cut-out, a PNG. */
  bytes: Uint8Array;
  contentType: string;
  requestId: string;
  /** Live keys: KRW deducted by this request, and the balance after it. */
  chargedKrw?: number;
  balanceKrw?: number;
  /** Dimensions of the result; NaN if the answer left the header out. */
  width: number;
  height: number;
  processingMs: number;
  /** Test keys: always "preview", and the free calls left this month. */
  testSize?: string;
  testRemaining?: number;
  /** Beyond the spec: "name/version" of the model that made the cut-out. */
  model?: string;
  /** Beyond the spec: 0 (sure) to 1 (unsure) about the subject's outline. */
  uncertainty?: number;
  /**
   * X-RateLimit-*: test keys, calls per minute; live keys, the tightest spending limit in
   * KRW. reset is a Unix time in seconds.
   */
  rateLimit?: { limit: number; remaining: number; reset: number };
  /** A replay of an earlier call with the same Idempotency-Key: chargedKrw is 0, the first call was charged. */
  replayed?: boolean;
}

/**
 * The form serialised once, up front: the same bytes are resent on a retry, and a body
 * of known length lets fetch announce Content-Length (the gateway then refuses an
 * oversized body at once instead of while receiving it).
 */
export async function encodeForm(file: ImageInput, o: RemoveOptions): Promise<{ body: Uint8Array<ArrayBuffer>; contentType: string }> {
  const form = new FormData();
  const blob = file instanceof Blob ? file : new Blob([file as Uint8Array<ArrayBuffer> | ArrayBuffer]);
  const name = typeof File !== "undefined" && file instanceof File && file.name ? file.name : "image";
  form.append("image_file", blob, name);
  if (o.size !== undefined) form.append("size", o.size);
  if (o.type !== undefined) form.append("type", o.type);
  if (o.format !== undefined) form.append("format", o.format);
  if (o.semitransparency !== undefined) form.append("semitransparency", String(o.semitransparency));
  if (o.channels !== undefined) form.append("channels", o.channels);
  if (o.bgColor !== undefined) form.append("bg_color", o.bgColor);
  // Letting the platform encode the form gives the boundary and the exact bytes.
  const encoded = new Request("http://form.invalid/", { method: "POST", body: form });
  return { body: new Uint8Array(await encoded.arrayBuffer()), contentType: encoded.headers.get("content-type")! };
}

const optionalNumber = (res: Response, name: string): number | undefined => {
  const v = res.headers.get(name);
  return v === null || v.trim() === "" ? undefined : Number(v);
};

/** A successful answer with its body read. */
export function resultOf(res: Response, bytes: Uint8Array): RemoveResult {
  const out: RemoveResult = {
    bytes,
    contentType: res.headers.get("content-type") ?? "",
    requestId: res.headers.get(H.requestId) ?? "",
    width: optionalNumber(res, H.width) ?? NaN,
    height: optionalNumber(res, H.height) ?? NaN,
    processingMs: optionalNumber(res, H.processingMs) ?? NaN,
  };
  const charged = optionalNumber(res, H.chargedKrw);
  const balance = optionalNumber(res, H.balanceKrw);
  const testSize = res.headers.get(H.testSize);
  const testRemaining = optionalNumber(res, H.testRemaining);
  if (charged !== undefined) out.chargedKrw = charged;
  if (balance !== undefined) out.balanceKrw = balance;
  if (testSize !== null) out.testSize = testSize;
  if (testRemaining !== undefined) out.testRemaining = testRemaining;
  const model = res.headers.get(H.model);
  const uncertainty = optionalNumber(res, H.uncertainty);
  const [limit, remaining, reset] = [H.rateLimit, H.rateRemaining, H.rateReset].map((h) => optionalNumber(res, h));
  if (model !== null) out.model = model;
  if (uncertainty !== undefined) out.uncertainty = uncertainty;
  if (limit !== undefined && remaining !== undefined && reset !== undefined) out.rateLimit = { limit, remaining, reset };
  if (res.headers.get(H.replayed) === "true") out.replayed = true;
  return out;
}

/**
 * Code and title from the error envelope `{"errors":[{"title","code"}]}`; an answer
 * without it (a proxy's HTML page, say) gives code `unknown` and the status line.
 */
export async function envelopeOf(res: Response): Promise<{ code: string; title: string }> {
  const text = await res.text();
  try {
    const first = (JSON.parse(text) as { errors?: { code?: unknown; title?: unknown }[] })?.errors?.[0];
    if (typeof first?.code === "string" && first.code) {
      return { code: first.code, title: typeof first.title === "string" ? first.title : first.code };
    }
  } catch {
    // Not JSON: fall through.
  }
  return { code: "unknown", title: `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}` };
}

/** Retry-After in seconds: delta-seconds, or an HTTP date relative to `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
