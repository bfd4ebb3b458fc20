// What the load tools' request parser (http1-request.ts) and response parser
// (http1-response.ts) share: reading heads and skipping bodies as data arrives split
// at any byte, the framing fields (Content-Length, Transfer-Encoding, Connection), and
// stopping for good at the first malformed input. Each subclass reads its own start
// line and decides what its message's framing means (RFC 9112 §6.3 differs for
// requests and responses) and what may follow the end of the last message.
import { BodySkip } from "./http1-body.ts";
import { contentLength, HeadReader, lastToken, ParseError, readHead } from "./http1-head.ts";

/** Reading a head (or waiting for one). */
export const HEAD = 0;
/** Skipping a body whose end is known (BodySkip). */
export const BODY = 1;
const FAILED = -1;

/** How the message just read frames its body (both Transfer-Encoding and Content-Length: malformed, thrown). */
export type Framing = "chunked" | "other coding" | "counted" | "empty" | "unframed";

export abstract class Http1MessageParser {
  protected state = HEAD;
  protected readonly head = new HeadReader();
  private readonly body = new BodySkip();
  private error = "";
  // The framing fields of the head being read (readHead's callback writes them).
  private length = -1;
  private encoding: string | undefined;
  /** The Connection field's tokens, repeated fields joined. */
  protected connection = "";
  private readonly onField = (name: string, value: string) => {
    if (name === "content-length") this.length = contentLength(value, this.length);
    else if (name === "transfer-encoding") this.encoding = this.encoding === undefined ? value : `${this.encoding}, ${value}`;
    else if (name === "connection") this.connection = this.connection ? `${this.connection}, ${value}` : value;
    else this.field(name, value);
  };

  /**
   * Feeds the bytes that arrived. Returns undefined, or the reason the input is
   * malformed (then, and for every later call, the parser reports nothing more).
   */
  push(data: Buffer): string | undefined {
    if (this.state === FAILED) return this.error;
    try {
      let pos = 0;
      while (pos < data.length) {
        if (this.state === HEAD) {
          pos = this.beforeHead(data, pos);
          if (pos === data.length) return undefined;
          const next = this.head.take(data, pos);
          if (next < 0) return undefined;
          pos = next;
          this.start(this.head.text);
        } else if (this.state === BODY) {
          const next = this.body.skip(data, pos);
          if (next < 0) return undefined;
          pos = next;
          this.complete();
        } else return this.afterLast();
      }
      return undefined;
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      this.state = FAILED;
      this.error = err.message;
      return this.error;
    }
  }

  /** The head's start line; the fields go to the framing fields and `field`. */
  protected startLine(head: string): string {
    this.length = -1;
    this.encoding = undefined;
    this.connection = "";
    return readHead(head, this.onField);
  }

  /** The framing of the message whose head was just read. */
  protected framing(): Framing {
    if (this.encoding !== undefined) {
      if (this.length >= 0) throw new ParseError("both transfer-encoding and content-length");
      return lastToken(this.encoding) === "chunked" ? "chunked" : "other coding";
    }
    return this.length < 0 ? "unframed" : this.length === 0 ? "empty" : "counted";
  }

  /** The body to skip next: a chunked one, or the counted one the head announced. */
  protected readBody(kind: "chunked" | "counted"): void {
    if (kind === "chunked") this.body.chunkedNext();
    else this.body.counted(this.length);
    this.state = BODY;
  }

  /** A field other than the framing ones (default: ignored). */
  protected field(_name: string, _value: string): void {}
  /** Where the head starts at `pos` (default: right there). */
  protected beforeHead(_data: Buffer, pos: number): number {
    return pos;
  }
  /** A head was read: decide what follows. */
  protected abstract start(head: string): void;
  /** The message's body ended. */
  protected abstract complete(): void;
  /** Data in a state of the subclass's own (after the last message): ignore it, or throw. */
  protected abstract afterLast(): undefined;
}
