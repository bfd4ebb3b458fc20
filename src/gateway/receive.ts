// The paid call's body: refused early by Content-Length, else while it streams, and
// counted against this process's receive budget while the call runs (a flood of large
// uploads is a 503 with Retry-After, not exhausted memory); then the one multipart parse.
import { fail, type Failure } from "../http/api-error.ts";
import type { ByteBudget } from "../http/byte-budget.ts";
import type { Form } from "../http/multipart.ts";
import { MAX_BODY_BYTES, announcedLength, parseMultipart, readBodyCapped } from "../http/read-body.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";

/** Room in the receive budget for the body as announced (or the cap): given back when the call ends. */
export function takeReceiveRoom(req: Request, budget: ByteBudget, deadlineMs: number): { ok: true; giveBack: () => Promise<void> } | Failure {
  const announced = announcedLength(req);
  if (announced !== undefined && announced > MAX_BODY_BYTES) return fail("file_too_large");
  const expected = Math.min(announced ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
  if (!budget.tryTake(expected)) return fail("gateway_busy", undefined, retryAfterSeconds(budget.untilRoomMs(expected), deadlineMs / 1000));
  return { ok: true, giveBack: async () => budget.give(expected) };
}

export interface ReceivedForm {
  ok: true;
  /** The body as it came: a product behind HTTP gets it unchanged. */
  bytes: Uint8Array<ArrayBuffer>;
  contentType: string | null;
  form: Form;
}

/** Reads the body up to the cap and parses it as multipart. */
export async function receiveForm(req: Request): Promise<ReceivedForm | Failure> {
  const body = await readBodyCapped(req, MAX_BODY_BYTES);
  if (!body.ok) return body;
  const contentType = req.headers.get("content-type");
  const form = parseMultipart(body.bytes, contentType);
  if (!form.ok) return form;
  return { ok: true, bytes: body.bytes, contentType, form: form.form };
}
