// The head of an HTTP/1.1 message (start line and header fields, up to the empty
// line), for the load tools' minimal parsers (http1-response.ts for the open loop,
// http1-request.ts for the stand-in product). The head is gathered from data that may
// arrive split at any byte, then read as one latin1 string: heads are a few hundred
// bytes and usually arrive in one read, so copying only when a head is split is cheaper
// than scanning byte by byte in JavaScript.
//
// Lines must end in CRLF: a bare CR or LF inside the head is malformed (the servers and
// clients these tools talk to are Node's and send CRLF; RFC 9112 lets a recipient
// refuse the bare forms). Obsolete line folding (a line starting with a space) is
// refused too, as RFC 9112 allows.

/** Malformed input: the parsers catch it and report its message. */
export class ParseError extends Error {}

const END_OF_HEAD = Buffer.from("\r\n\r\n");
/** Longest head accepted (Node's own default limit is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;

export class HeadReader {
  /** Bytes of a head whose end has not arrived yet. */
  private pending: Buffer | undefined;
  /** The last head found by `take`, without its final CRLFCRLF. */
  text = "";

  /** Whether part of a head is waiting for the rest. */
  get partial(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Looks for the end of the head in `data` from `pos`. When found, the head is in
   * `text` and the position after its empty line is returned; otherwise the bytes are
   * kept and -1 is returned. Throws ParseError past MAX_HEAD_BYTES.
   */
  take(data: Buffer, pos: number): number {
    if (this.pending === undefined) {
      const end = data.indexOf(END_OF_HEAD, pos);
      if (end >= 0) {
        this.text = data.toString("latin1", pos, end);
        return end + 4;
      }
      if (data.length - pos > MAX_HEAD_BYTES) throw new ParseError("head too long");
      // Copied: the caller's buffer is not ours to keep.
      this.pending = Buffer.from(data.subarray(pos));
      return -1;
    }
    const kept = this.pending.length;
    const joined = Buffer.concat([this.pending, data.subarray(pos)]);
    // The kept bytes hold no complete terminator, but may hold its first three bytes.
    const end = joined.indexOf(END_OF_HEAD, Math.max(0, kept - 3));
    if (end < 0) {
      if (joined.length > MAX_HEAD_BYTES) throw new ParseError("head too long");
      this.pending = joined;
      return -1;
    }
    this.pending = undefined;
    this.text = joined.toString("latin1", 0, end);
    return pos + end + 4 - kept;
  }

  reset(): void {
    this.pending = undefined;
    this.text = "";
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Bytes a field line may not hold: the line breaks (the head was split on CRLF, so
// any left are bare) and the other controls except HTAB.
const BAD_LINE_BYTE = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * Splits a head into its start line and calls `onField` with each field's name (lower
 * case) and value (without surrounding spaces and tabs), in order. Throws ParseError
 * for a line that is not `token ":" value`.
 */
export function readHead(head: string, onField: (name: string, value: string) => void): string {
  const lines = head.split("\r\n");
  const start = lines[0]!;
  if (BAD_LINE_BYTE.test(start)) throw new ParseError("bad byte in the start line");
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    // No colon, an empty name, or whitespace in or before the name (this also refuses
    // folded continuation lines, which start with whitespace).
    if (colon <= 0) throw new ParseError("field line without a name");
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw new ParseError(`bad field name ${JSON.stringify(name)}`);
    if (BAD_LINE_BYTE.test(line)) throw new ParseError("bad byte in a field line");
    onField(name.toLowerCase(), trimSpaces(line, colon + 1, line.length));
  }
  return start;
}

/** line[from, to) without leading and trailing SP and HTAB (String.trim would also take latin1's NBSP). */
function trimSpaces(line: string, from: number, to: number): string {
  while (from < to && isSpace(line.charCodeAt(from))) from++;
  while (to > from && isSpace(line.charCodeAt(to - 1))) to--;
  return line.slice(from, to);
}

const isSpace = (c: number) => c === 0x20 || c === 0x09;

/** Whether a comma-separated field value (Connection, Transfer-Encoding) holds `token`, any case. */
export function hasToken(value: string, token: string): boolean {
  return value.split(",").some((t) => trimSpaces(t, 0, t.length).toLowerCase() === token);
}

/** The last token of a comma-separated field value, lower case ("" when none). */
export function lastToken(value: string): string {
  const last = value.slice(value.lastIndexOf(",") + 1);
  return trimSpaces(last, 0, last.length).toLowerCase();
}

/** A Content-Length value: decimal digits only; repeated fields must agree. */
export function contentLength(value: string, before: number): number {
  if (!/^\d{1,15}$/.test(value)) throw new ParseError(`bad content-length ${JSON.stringify(value)}`);
  const n = Number(value);
  if (before >= 0 && before !== n) throw new ParseError("conflicting content-length fields");
  return n;
}
