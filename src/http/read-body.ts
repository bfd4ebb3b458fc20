// Reads a request body with a hard byte cap while it arrives: a body with no announced
// length is refused as soon as it passes the cap, and the rest is never buffered.
import { fail, type Failure } from "./api-error.ts";

export const MAX_BODY_BYTES = 12_000_000;

export function tooLarge(): Failure {
  return fail("file_too_large", "Request body is larger than 12,000,000 bytes");
}

/** Content-Length as a number, or undefined when absent or unreadable. */
export function announcedLength(req: Request): number | undefined {
  const raw = req.headers.get("content-length");
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
  return Number(raw);
}

export async function readBodyCapped(
  req: Request,
  maxBytes: number,
  onChunk?: (bytes: number) => void,
): Promise<{ ok: true; bytes: Uint8Array<ArrayBuffer> } | Failure> {
  const announced = announcedLength(req);
  if (announced !== undefined && announced > maxBytes) return tooLarge();
  if (!req.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      onChunk?.(value.byteLength);
      if (total > maxBytes) {
        // Stop receiving: cancel tells the runtime we will not read the rest.
        reader.cancel().catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
  } catch {
    return fail("invalid_parameter", "The request body could not be read completely");
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { ok: true, bytes };
}

/** Parses multipart/form-data bytes; anything unreadable is 400 invalid_parameter. */
export async function parseMultipart(bytes: Uint8Array<ArrayBuffer>, contentType: string | null): Promise<{ ok: true; form: FormData } | Failure> {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType) || !/boundary=/i.test(contentType)) {
    return fail("invalid_parameter", "The request must be multipart/form-data with a boundary");
  }
  try {
    const form = await new Response(bytes, { headers: { "content-type": contentType } }).formData();
    return { ok: true, form };
  } catch {
    return fail("invalid_parameter", "The multipart body could not be read");
  }
}
