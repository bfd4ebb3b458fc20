// An incremental HTTP/1.1 request parser for the stand-in product (stub-product.ts): it
// finds where each request ends, reads the few fields the stub answers by, and skips
// the body without keeping it. Data may arrive split at any byte, and several
// (pipelined) requests may arrive together; they are reported in order.
//
// Framing (RFC 9112 §6.3, for requests):
// - Transfer-Encoding whose last coding is chunked: a chunked body (http1-chunked.ts).
//   Any other Transfer-Encoding, or Transfer-Encoding with Content-Length: malformed
//   (the RFC's 400 and close).
// - Content-Length: that many bytes (repeated fields must agree).
// - Neither: no body.
// Empty lines before a request line are skipped (RFC 9112 §2.2). Once a request asks
// to close the connection, nothing after it is read. After a malformed input the
// parser reports nothing more; the stub answers 400 and closes.
import { HEAD, Http1MessageParser } from "./http1-message.ts";
import { hasToken, ParseError } from "./http1-head.ts";

/** After a request that closes the connection: the rest is ignored. */
const CLOSED = 2;

const REQUEST_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^ ]+ HTTP\/1\.([01])$/;

/** What the stub needs of a request. */
export interface RequestFacts {
  /** X-PD-Request-Id (repeated fields joined with ", ", as Node does); "" when absent. */
  requestId: string;
  /** False when the request asks to close the connection after its answer. */
  keepAlive: boolean;
}

export interface RequestHandlers {
  /** A request's head asked for `Expect: 100-continue` (before its body is read). */
  onContinue(): void;
  /** A request was read to the end of its body. */
  onRequest(facts: RequestFacts): void;
}

export class Http1RequestParser extends Http1MessageParser {
  private facts: RequestFacts = { requestId: "", keepAlive: true };
  // The stub's own fields of the head being read.
  private requestId: string | undefined;
  private expect = "";

  constructor(private readonly handlers: RequestHandlers) {
    super();
  }

  /** Whether nothing of a request has been read since the last one ended. */
  get idle(): boolean {
    return (this.state === HEAD && !this.head.partial) || this.state === CLOSED;
  }

  protected override field(name: string, value: string): void {
    if (name === "x-pd-request-id") this.requestId = this.requestId === undefined ? value : `${this.requestId}, ${value}`;
    else if (name === "expect") this.expect = value;
  }

  /** Empty lines before a request line are skipped (RFC 9112 §2.2). */
  protected override beforeHead(data: Buffer, pos: number): number {
    if (this.head.partial) return pos;
    while (pos < data.length && (data[pos] === 0x0d || data[pos] === 0x0a)) pos++;
    return pos;
  }

  protected afterLast(): undefined {
    return undefined; // CLOSED: whatever follows is ignored
  }

  protected start(head: string): void {
    this.requestId = undefined;
    this.expect = "";
    const m = REQUEST_LINE.exec(this.startLine(head));
    if (!m) throw new ParseError("bad request line");
    const keepAlive = m[1] === "1" ? !hasToken(this.connection, "close") : hasToken(this.connection, "keep-alive");
    this.facts = { requestId: this.requestId ?? "", keepAlive };
    const framing = this.framing();
    if (framing === "other coding") throw new ParseError("transfer-encoding without chunked last");
    if (framing !== "chunked" && framing !== "counted") return this.complete();
    this.readBody(framing);
    if (this.expect.toLowerCase() === "100-continue") this.handlers.onContinue();
  }

  protected complete(): void {
    this.state = this.facts.keepAlive ? HEAD : CLOSED;
    this.handlers.onRequest(this.facts);
  }
}
