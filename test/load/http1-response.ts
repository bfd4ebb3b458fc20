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
import { HEAD, Http1MessageParser } from "./http1-message.ts";
import { hasToken, ParseError } from "./http1-head.ts";

/** After a response whose body runs to the close: the close ends it (`finish`). */
const UNTIL_CLOSE = 2;
/** After a response that closes the connection: nothing more may come. */
const CLOSED = 3;

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: [^\r\n]*)?$/;

/** Called for each complete final response, in order. */
export type OnResponse = (status: number, keepAlive: boolean) => void;

export class Http1ResponseParser extends Http1MessageParser {
  private status = 0;
  private keepAlive = true;

  constructor(private readonly onResponse: OnResponse) {
    super();
  }

  /** Whether nothing of a response has been read since the last one ended. */
  get idle(): boolean {
    return this.state === HEAD && !this.head.partial;
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

  protected afterLast(): undefined {
    if (this.state === UNTIL_CLOSE) return undefined; // body bytes until the close
    throw new ParseError("data after a response that closes the connection");
  }

  protected start(head: string): void {
    const m = STATUS_LINE.exec(this.startLine(head));
    if (!m) throw new ParseError("bad status line");
    const status = Number(m[2]);
    if (status < 200) {
      if (status === 101) throw new ParseError("unexpected 101 Switching Protocols");
      return; // interim: the final response follows
    }
    this.status = status;
    this.keepAlive = m[1] === "1" ? !hasToken(this.connection, "close") : hasToken(this.connection, "keep-alive");
    if (status === 204 || status === 304) return this.complete();
    const framing = this.framing();
    if (framing === "chunked" || framing === "counted") return this.readBody(framing);
    if (framing === "empty") return this.complete();
    // Another final coding, or no framing at all: the body runs to the close.
    this.keepAlive = false;
    this.state = UNTIL_CLOSE;
  }

  protected complete(): void {
    // The state is set before the call, which may send the next request.
    this.state = this.keepAlive ? HEAD : CLOSED;
    this.onResponse(this.status, this.keepAlive);
  }
}
