// A browser form's fields (urlencoded or multipart) read within a byte and a field limit,
// both checked while the body arrives: a chunked body is refused as soon as it passes
// either, and the rest is never read (read-body.ts; unread-body.ts deals with it). A body
// that announces more than the byte limit is refused before any of it is read. Only
// within both limits is anything decoded, so a body of two million fields costs a count
// of its first bytes, not two million entries.
import { fail, type Failure } from "./api-error.ts";
import { boundaryOf, Form, parseForm } from "./multipart.ts";
import { readBodyCapped } from "./read-body.ts";

export interface FormLimits {
  maxBytes: number;
  maxFields: number;
}

/** What the limits refused: the byte limit or the field limit (both answered 413 by the caller). */
export type FormRead = { ok: true; fields: Record<string, string> } | { ok: false; refused: "bytes" | "fields" | "unreadable"; title: string };

const AMPERSAND = 0x26;

/**
 * The form's text fields (a name sent twice: its last value; file parts are left out).
 * A body that is neither urlencoded nor multipart is not read: no fields.
 */
export async function readFormCapped(req: Request, limits: FormLimits): Promise<FormRead> {
  const type = req.headers.get("content-type") ?? "";
  const urlencoded = /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type);
  const boundary = /^multipart\/form-data\s*;/i.test(type) ? boundaryOf(type) : undefined;
  if (!urlencoded && boundary === undefined) return { ok: true, fields: {} };
  const tooManyFields = { ok: false, refused: "fields", title: `The form has more than ${limits.maxFields} fields` } as const;

  // An urlencoded body has one field more than it has '&'s: counted chunk by chunk.
  let separators = 0;
  let overFields = false;
  const countFields = (chunk: Uint8Array): Failure | undefined => {
    for (let i = chunk.indexOf(AMPERSAND); i >= 0; i = chunk.indexOf(AMPERSAND, i + 1)) {
      if (++separators < limits.maxFields) continue;
      overFields = true;
      return fail("invalid_parameter", tooManyFields.title);
    }
    return undefined;
  };
  const body = await readBodyCapped(req, limits.maxBytes, urlencoded ? countFields : undefined);
  if (!body.ok) {
    if (overFields) return tooManyFields;
    const title = body.title ?? "The form could not be read";
    return { ok: false, refused: body.code === "file_too_large" ? "bytes" : "unreadable", title };
  }

  const fields: Record<string, string> = {};
  if (urlencoded) {
    for (const [k, v] of new URLSearchParams(new TextDecoder().decode(body.bytes))) fields[k] = v;
    return { ok: true, fields };
  }
  const form = parseForm(body.bytes, boundary!, limits.maxFields);
  if (form === "too-many-parts") return tooManyFields;
  if (!(form instanceof Form)) return { ok: false, refused: "unreadable", title: "The form could not be read" };
  for (const [k, v] of form.entries) if (typeof v === "string") fields[k] = v;
  return { ok: true, fields };
}
