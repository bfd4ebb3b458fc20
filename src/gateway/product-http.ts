// The product behind HTTP (the split deployment's PRODUCT_URL, and tests' fake
// products): the client's form as it came, the job's facts in X-PD-* headers, and the
// answer read back: the PNG with its facts in headers, or a product error envelope.
import { H } from "../http/headers.ts";
import { PRODUCT_PATH } from "../http/product-path.ts";
import { malformedAnswer, productRefusal, type ProductAnswer, type ProductImage, type ProductPort } from "./upstream.ts";

/** `send` delivers one request (fetch to PRODUCT_URL, or a test's fake). */
export function httpProduct(send: (req: Request, signal: AbortSignal) => Promise<Response>): ProductPort {
  return async ({ job, wire, forcedSize }, signal) => {
    const req = new Request(`http://product${PRODUCT_PATH}`, {
      method: "POST",
      body: wire.body,
      headers: {
        "content-type": wire.contentType,
        [H.requestId]: job.requestId,
        [H.deadline]: String(job.deadline),
        [H.queueKey]: job.queueKey,
        [H.callClass]: job.callClass,
        ...(forcedSize && job.size ? { [H.forceSize]: job.size } : {}),
      },
      signal,
    });
    return readAnswer(await send(req, signal));
  };
}

async function readAnswer(res: Response): Promise<ProductAnswer> {
  if (res.status === 200) {
    const image = await readImage(res).catch(() => undefined);
    return image ? { ok: true, image } : malformedAnswer();
  }
  const first = await res
    .json()
    .then((b: unknown) => (b as { errors?: { code?: unknown; title?: unknown }[] })?.errors?.[0])
    .catch(() => undefined);
  return productRefusal(first?.code, first?.title, res.status, parseRetryAfter(res.headers.get("retry-after")));
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
