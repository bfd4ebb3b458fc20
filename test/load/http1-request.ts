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
import { BodySkip } from "./http1-body.ts";
import { contentLength, HeadReader, hasToken, lastToken, ParseError, readHead } from "./http1-head.ts";

const HEAD = 0;
const BODY = 1;
/** After a request that closes the connection: the rest is ignored. */
const CLOSED = 2;
const FAILED = 3;

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

export class Http1RequestParser {
  private state = HEAD;
  private readonly head = new HeadReader();
  private readonly body = new BodySkip();
  private facts: RequestFacts = { requestId: "", keepAlive: true };
  private error = "";
  // The fields of the head being read (readHead's callback writes them).
  private length = -1;
  private encoding: string | undefined;
  private connection = "";
  private requestId: string | undefined;
  private expect = "";
  private readonly onField = (name: string, value: string) => {
    if (name === "content-length") this.length = contentLength(value, this.length);
    else if (name === "transfer-encoding") this.encoding = this.encoding === undefined ? value : `${this.encoding}, ${value}`;
    else if (name === "connection") this.connection = this.connection ? `${this.connection}, ${value}` : value;
    else if (name === "x-pd-request-id") this.requestId = this.requestId === undefined ? value : `${this.requestId}, ${value}`;
    else if (name === "expect") this.expect = value;
  };

  constructor(private readonly handlers: RequestHandlers) {}

  /** Whether nothing of a request has been read since the last one ended. */
  get idle(): boolean {
    return (this.state === HEAD && !this.head.partial) || this.state === CLOSED;
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
            if (!this.head.partial) {
              while (pos < data.length && (data[pos] === 0x0d || data[pos] === 0x0a)) pos++;
              if (pos === data.length) return undefined;
            }
            const next = this.head.take(data, pos);
            if (next < 0) return undefined;
            pos = next;
            this.startRequest(this.head.text);
            break;
          }
          case BODY: {
            const next = this.body.skip(data, pos);
            if (next < 0) return undefined;
            pos = next;
            this.complete();
            break;
          }
          case CLOSED:
            return undefined;
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

  private startRequest(head: string): void {
    this.length = -1;
    this.encoding = undefined;
    this.connection = "";
    this.requestId = undefined;
    this.expect = "";
    const m = REQUEST_LINE.exec(readHead(head, this.onField));
    if (!m) throw new ParseError("bad request line");
    const keepAlive = m[1] === "1" ? !hasToken(this.connection, "close") : hasToken(this.connection, "keep-alive");
    this.facts = { requestId: this.requestId ?? "", keepAlive };
    if (this.encoding !== undefined) {
      if (this.length >= 0) throw new ParseError("both transfer-encoding and content-length");
      if (lastToken(this.encoding) !== "chunked") throw new ParseError("transfer-encoding without chunked last");
      this.body.chunkedNext();
      this.state = BODY;
    } else if (this.length > 0) {
      this.body.counted(this.length);
      this.state = BODY;
    } else return this.complete();
    if (this.expect.toLowerCase() === "100-continue") this.handlers.onContinue();
  }

  private complete(): void {
    this.state = this.facts.keepAlive ? HEAD : CLOSED;
    this.handlers.onRequest(this.facts);
  }
}
