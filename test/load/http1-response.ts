// An incremental HTTP/1.1 response parser for the open-loop load generator
// (open-loop.ts): it finds where each response ends and reports its status, and keeps
// nothing of the body, because the generator counts answers and their timing, not
// their content. Data may arrive split at any byte.
//
// How a response's end is found (RFC 9112 §6.3), in this order:
// - 1xx: an interim response with no body; skipped (not reported), the final response
//   follows. 101 (Switching Protocols) is malformed here: the generator never asks to
//   upgrade.
// - 204 and 304: no body, whatever the fields say.
// - Transfer-Encoding whose last coding is chunked: the chunked body (http1-chunked.ts),
//   trailers skipped. Another final coding: the body runs to the connection's close.
// - Transfer-Encoding and Content-Length together: malformed (RFC 9112 says such a
//   message "ought to be handled as an error").
// - Content-Length: that many bytes (repeated fields must agree).
// - Neither: the body runs to the connection's close; `finish()` completes it.
// A response is "keep-alive" unless it says `Connection: close`, is HTTP/1.0 without
// `Connection: keep-alive`, or ends at the close; bytes after a response that is not
// keep-alive are malformed. After a malformed input the parser reports nothing more.
import { BodySkip } from "./http1-body.ts";
import { contentLength, HeadReader, hasToken, lastToken, ParseError, readHead } from "./http1-head.ts";

const HEAD = 0;
const BODY = 1;
const UNTIL_CLOSE = 2;
/** After a response that closes the connection: nothing more may come. */
const CLOSED = 3;
const FAILED = 4;

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: [^\r\n]*)?$/;

/** Called for each complete final response, in order. */
export type OnResponse = (status: number, keepAlive: boolean) => void;

export class Http1ResponseParser {
  private state = HEAD;
  private readonly head = new HeadReader();
  private readonly body = new BodySkip();
  private status = 0;
  private keepAlive = true;
  private error = "";
  // The fields of the head being read (readHead's callback writes them).
  private length = -1;
  private encoding: string | undefined;
  private connection = "";
  private readonly onField = (name: string, value: string) => {
    if (name === "content-length") this.length = contentLength(value, this.length);
    else if (name === "transfer-encoding") this.encoding = this.encoding === undefined ? value : `${this.encoding}, ${value}`;
    else if (name === "connection") this.connection = this.connection ? `${this.connection}, ${value}` : value;
  };

  constructor(private readonly onResponse: OnResponse) {}

  /** Whether nothing of a response has been read since the last one ended. */
  get idle(): boolean {
    return this.state === HEAD && !this.head.partial;
  }

  /**
   * Feeds the bytes that arrived. Returns undefined, or the reason the input is
   * malformed (then, and for every later call, the parser reports nothing more).
   */
  push(data: Buffer): string | undefined {
    if (this.state === FAILED) return this.error;
    try {
      let pos = 0;
      while (pos < data.length) {
        switch (this.state) {
          case HEAD: {
            const next = this.head.take(data, pos);
            if (next < 0) return undefined;
            pos = next;
            this.startResponse(this.head.text);
            break;
          }
          case BODY: {
            const next = this.body.skip(data, pos);
            if (next < 0) return undefined;
            pos = next;
            this.complete();
            break;
          }
          case UNTIL_CLOSE:
            return undefined;
          case CLOSED:
            throw new ParseError("data after a response that closes the connection");
        }
      }
      return undefined;
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      this.state = FAILED;
      this.error = err.message;
      return this.error;
    }
  }

  /**
   * The connection closed (call after the last `push`). Returns the status of a
   * response whose body ran to the close, which the close completes; -1 when none did
   * (nothing was being read, or a response was cut short).
   */
  finish(): number {
    const ended = this.state === UNTIL_CLOSE ? this.status : -1;
    this.state = CLOSED;
    return ended;
  }

  private startResponse(head: string): void {
    this.length = -1;
    this.encoding = undefined;
    this.connection = "";
    const m = STATUS_LINE.exec(readHead(head, this.onField));
    if (!m) throw new ParseError("bad status line");
    const status = Number(m[2]);
    if (status < 200) {
      if (status === 101) throw new ParseError("unexpected 101 Switching Protocols");
      return; // interim: the final response follows
    }
    this.status = status;
    this.keepAlive = m[1] === "1" ? !hasToken(this.connection, "close") : hasToken(this.connection, "keep-alive");
    if (status === 204 || status === 304) return this.complete();
    if (this.encoding !== undefined) {
      if (this.length >= 0) throw new ParseError("both transfer-encoding and content-length");
      if (lastToken(this.encoding) === "chunked") {
        this.body.chunkedNext();
      this.state = BODY;
        return;
      }
      return this.untilClose();
    }
    if (this.length < 0) return this.untilClose();
    if (this.length === 0) return this.complete();
    this.body.counted(this.length);
    this.state = BODY;
  }

  private untilClose(): void {
    this.keepAlive = false;
    this.state = UNTIL_CLOSE;
  }

  private complete(): void {
    // The state is set before the call, which may send the next request.
    this.state = this.keepAlive ? HEAD : CLOSED;
    this.onResponse(this.status, this.keepAlive);
  }
}
