// Where a message body of known framing ends, for both load-tool parsers (through
// http1-message.ts: the stand-in's requests, the open loop's responses): a
// Content-Length count of bytes, or a chunked body (http1-chunked.ts). The bytes are
// skipped, never kept.
import { ChunkedBody } from "./http1-chunked.ts";

export class BodySkip {
  /** Bytes of a counted body still to come; -1 while a chunked body is read. */
  private remaining = 0;
  private readonly chunked = new ChunkedBody();

  /** The next body is `n` > 0 bytes long. */
  counted(n: number): void {
    this.remaining = n;
  }

  /** The next body is chunked. */
  chunkedNext(): void {
    this.remaining = -1;
  }

  /**
   * The position in `data` just after the body's end, or -1 when all of `data` from
   * `pos` was body and more is to come. Throws on a malformed chunked body.
   */
  skip(data: Buffer, pos: number): number {
    if (this.remaining < 0) return this.chunked.skip(data, pos);
    const take = Math.min(this.remaining, data.length - pos);
    this.remaining -= take;
    return this.remaining === 0 ? pos + take : -1;
  }
}
