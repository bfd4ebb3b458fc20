// The product behind HTTP (the split deployment's PRODUCT_URL, and tests' fake
// products): the client's form as it came, the job's facts in X-PD-* headers, and the
// answer read back: the PNG with its facts in headers, or a product error envelope.
import { H } from "../http/headers.ts";
import { PRODUCT_PATH } from "../http/product-path.ts";
import { malformedAnswer, productRefusal, type ProductAnswer, type ProductImage, type ProductPort } from "./upstream.ts";

/** One request to the product: the job's facts as headers, the client's form as the body. */
export interface ProductMessage {
  path: string;
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer>;
}

/** The product's answer, read to the end. */
export interface ProductReply {
  status: number;
  header(name: string): string | null;
  body: Uint8Array;
}

/** Delivers one message (src/wiring/remote-product.ts over the network; a test's fake). */
export type ProductSender = (msg: ProductMessage, signal: AbortSignal) => Promise<ProductReply>;

/** A sender over a fetch-style handler: a test's fake product, or an app's `fetch`. */
export function viaFetch(handle: (req: Request, signal: AbortSignal) => Promise<Response>): ProductSender {
  return async (msg, signal) => {
    const res = await handle(new Request(`http://product${msg.path}`, { method: "POST", body: msg.body, headers: msg.headers, signal }), signal);
    return replyOf(res);
  };
}

/**
 * A fetch Response as a reply, its body read to the end. A body that breaks off reads
 * as empty: the answer arrived, so it is malformed (not resent), never "unreachable".
 */
export async function replyOf(res: Response): Promise<ProductReply> {
  const body = await res.arrayBuffer().then(
    (b) => new Uint8Array(b),
    () => new Uint8Array(0),
  );
  return { status: res.status, header: (name) => res.headers.get(name), body };
}

export function httpProduct(send: ProductSender): ProductPort {
  return async ({ job, wire, forcedSize }, signal) => {
    const reply = await send(
      {
        path: PRODUCT_PATH,
        body: wire.body,
        headers: {
          "content-type": wire.contentType,
          [H.requestId]: job.requestId,
          [H.deadline]: String(job.deadline),
          [H.queueKey]: job.queueKey,
          [H.callClass]: job.callClass,
          ...(forcedSize && job.size ? { [H.forceSize]: job.size } : {}),
        },
      },
      signal,
    );
    return readAnswer(reply);
  };
}

function readAnswer(res: ProductReply): ProductAnswer {
  if (res.status === 200) {
    const image = readImage(res);
    return image ? { ok: true, image } : malformedAnswer();
  }
  let first: { code?: unknown; title?: unknown } | undefined;
  try {
    first = (JSON.parse(new TextDecoder().decode(res.body)) as { errors?: { code?: unknown; title?: unknown }[] })?.errors?.[0];
  } catch {
    first = undefined;
  }
  return productRefusal(first?.code, first?.title, res.status, parseRetryAfter(res.header("retry-after")));
}

function readImage(res: ProductReply): ProductImage | undefined {
  if (!(res.header("content-type") ?? "").startsWith("image/png")) return undefined;
  const num = (name: string) => {
    const v = Number(res.header(name));
    return Number.isInteger(v) && v >= 0 ? v : undefined;
  };
  const width = num(H.width);
  const height = num(H.height);
  if (!width || !height) return undefined;
  const png = res.body as Uint8Array<ArrayBuffer>;
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

/** The product's model, model input and uncertainty headers, handed on only when well formed. */
function passedOn(res: ProductReply): { model?: string; modelInput?: string; uncertainty?: number } {
  const model = res.header(H.model) ?? "";
  const modelInput = res.header(H.modelInput) ?? "";
  const u = Number(res.header(H.uncertainty) ?? "x");
  return {
    ...(/^[\x21-\x7e]{1,100}$/.test(model) ? { model } : {}),
    ...(/^[1-9]\d{0,4}x[1-9]\d{0,4}$/.test(modelInput) ? { modelInput } : {}),
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
