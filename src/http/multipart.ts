// multipart/form-data (RFC 7578 over RFC 2046's framing) read straight from the body's
// bytes into names, text values and file parts that are views of those bytes. The
// platform's parser (`Response.formData()`, undici on Node) builds a FormData, a Blob
// and a File per part and copies the image into them: in the paid load's CPU profile
// that was the largest cost of ours besides the stores. What is accepted is
// what that parser accepted (no preamble, no transport padding), with two differences
// (test/http/multipart.test.ts compares the two):
// - a delimiter is CRLF "--" boundary, as RFC 2046 says: the boundary's text inside a
//   part's content without the CRLF before it is content, where the platform's parser
//   refuses the body;
// - a part's header line holding a lone CR or LF is refused (the platform's reads on).
// So:
// - the body starts with the delimiter (after blank lines), each part is header lines,
//   an empty line and its content, and the close delimiter ends it;
// - a part needs `Content-Disposition: form-data; name="…"`; a filename (or
//   filename*) makes it a file, otherwise its content is UTF-8 text;
// - anything else (no delimiter, a header line without a colon, no closing delimiter)
//   is malformed, and the caller answers 400;
// - a form of more than `maxParts` parts is refused when the part after the last allowed
//   one begins, before its headers are read: a body of 200,000 tiny parts costs the
//   parse of MAX_FORM_PARTS of them, not of all.
import { bytesAt } from "../engine/imaging/bytes.ts";

/** A file part: its content is a view of the request body (not a copy). */
export interface FilePart {
  readonly filename: string;
  readonly type: string;
  readonly bytes: Uint8Array;
}

export type FormValue = string | FilePart;

/** The parts of a form in the order they came, read by name. */
export class Form {
  constructor(readonly entries: readonly (readonly [string, FormValue])[]) {}

  names(): Set<string> {
    return new Set(this.entries.map(([name]) => name));
  }

  getAll(name: string): FormValue[] {
    const out: FormValue[] = [];
    for (const [n, v] of this.entries) if (n === name) out.push(v);
    return out;
  }
}

/**
 * More parts than a form we read can hold: the removebg form has eight named parts, each
 * allowed once (src/product/form-params.ts refuses any other), and the console's forms
 * fewer still. Twice that leaves room for a client that sends a few extra fields, which
 * are then named in a 400 rather than lost in a count.
 */
export const MAX_FORM_PARTS = 16;

/** Why parseForm did not return a form. */
export type FormRefusal = "malformed" | "too-many-parts";

/** Part headers larger than this are not a form any client sends. */
const MAX_PART_HEADER_BYTES = 16 * 1024;
const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;
const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/** The boundary parameter of a multipart Content-Type, quoted or not; undefined when absent or unusable. */
export function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const b = m?.[1] ?? m?.[2];
  // RFC 2046: 1 to 70 characters, not ending in a space.
  return b && b.length <= 70 && !b.endsWith(" ") ? b : undefined;
}

/** The form, or why the bytes are not one: not a well-formed multipart body for `boundary`, or more than `maxParts` parts. */
export function parseForm(body: Uint8Array, boundary: string, maxParts: number = MAX_FORM_PARTS): Form | FormRefusal {
  const dashBoundary = encoder.encode(`--${boundary}`);
  let at = 0;
  while (body[at] === CR && body[at + 1] === LF) at += 2;
  if (!bytesAt(body, dashBoundary, at)) return "malformed";
  const entries: [string, FormValue][] = [];
  for (;;) {
    at += dashBoundary.length;
    if (body[at] === DASH && body[at + 1] === DASH) return new Form(entries); // the close delimiter; an epilogue may follow
    if (body[at] !== CR || body[at + 1] !== LF) return "malformed";
    if (entries.length === maxParts) return "too-many-parts";
    at += 2;
    const headEnd = indexOfEmptyLine(body, at);
    if (headEnd < 0 || headEnd - at > MAX_PART_HEADER_BYTES) return "malformed";
    const head = readPartHead(utf8.decode(body.subarray(at, headEnd)));
    if (!head) return "malformed";
    const contentStart = headEnd + 4;
    const next = findDelimiter(body, dashBoundary, contentStart);
    if (next < 0) return "malformed";
    const content = body.subarray(contentStart, next);
    entries.push([
      head.name,
      head.filename === undefined
        ? utf8.decode(content)
        : { filename: head.filename, type: fileType(head.type), bytes: content },
    ]);
    at = next + 2; // at the delimiter's dashes
  }
}

/** A file part's type as the platform's File keeps it: text/plain when absent, lower case, empty unless printable ASCII. */
function fileType(header: string | undefined): string {
  if (header === undefined) return "text/plain";
  return /^[\x20-\x7e]*$/.test(header) ? header.toLowerCase() : "";
}

/** Position of the next CRLF + "--boundary" at or after `from`, or -1. */
function findDelimiter(body: Uint8Array, dashBoundary: Uint8Array, from: number): number {
  for (let i = body.indexOf(CR, from); i >= 0; i = body.indexOf(CR, i + 1)) {
    if (body[i + 1] === LF && bytesAt(body, dashBoundary, i + 2)) return i;
  }
  return -1;
}

/** Position of the CRLF CRLF that ends a part's headers (or of the lone CRLF of a part with none). */
function indexOfEmptyLine(body: Uint8Array, from: number): number {
  if (body[from] === CR && body[from + 1] === LF) return from - 2;
  for (let i = body.indexOf(CR, from); i >= 0; i = body.indexOf(CR, i + 1)) {
    if (body[i + 1] === LF && body[i + 2] === CR && body[i + 3] === LF) return i;
  }
  return -1;
}

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * The one Content-Disposition form the platform's parser reads (and every browser,
 * curl and common client writes): form-data, a quoted name, optionally a quoted
 * filename or filename*, nothing after.
 */
const DISPOSITION = /^form-data; name="([^"]*)"(?:; filename\*?="([^"]*)")?$/;

interface PartHead {
  name: string;
  filename?: string;
  type?: string;
}

/** A part's header lines; undefined without a form-data Content-Disposition naming the part. */
function readPartHead(text: string): PartHead | undefined {
  let disposition: RegExpExecArray | null = null;
  let type: string | undefined;
  for (const line of text === "" ? [] : text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0 || /[\r\n]/.test(line)) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!TOKEN.test(name)) return undefined;
    const value = line.slice(colon + 1).trim();
    if (name === "content-disposition") {
      disposition = DISPOSITION.exec(value);
      if (!disposition) return undefined;
    } else if (name === "content-type") type = value;
  }
  if (!disposition) return undefined;
  const filename = disposition[2];
  return { name: unescapeName(disposition[1]!), ...(filename !== undefined ? { filename: unescapeName(filename) } : {}), ...(type !== undefined ? { type } : {}) };
}

/**
 * Browsers and the platform write a name's or filename's LF, CR and " as %0A, %0D and
 * %22 (the HTML form encoding); those three are read back, as the platform does.
 */
function unescapeName(raw: string): string {
  return raw.replace(/%0A/gi, "\n").replace(/%0D/gi, "\r").replace(/%22/g, '"');
}
