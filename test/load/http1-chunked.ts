// Skips an HTTP/1.1 chunked body (RFC 9112 §7.1) without keeping it, for the load
// tools' parsers: the open loop only needs to know where an answer ends, the stand-in
// product where a request ends. The framing is read byte by byte (chunk-size lines,
// the CRLF after each chunk's data, the trailer section), so data may be split
// anywhere, even inside a CRLF, with nothing buffered; the chunk data itself is
// skipped in one step per read.
//
// Lenient where nothing depends on it: chunk extensions and trailer fields are skipped
// unread (only their length is bounded). Strict where framing depends on it: the size
// is hex digits, each line ends in CRLF, and each chunk's data is followed by CRLF.
import { ParseError } from "./http1-head.ts";

// Where the skipper is (plain numbers rather than an enum: the repository's code is
// plain erasable TypeScript).
const S = {
  SizeFirst: 0, // the first hex digit of a chunk size
  Size: 1, // further hex digits
  SizeSpace: 2, // spaces or tabs after the size, before ";" or CR
  Extension: 3, // ";" and anything up to CR
  SizeLf: 4, // the LF ending the size line
  Data: 5, // chunk data
  DataCr: 6, // the CRLF after chunk data
  DataLf: 7,
  TrailerStart: 8, // start of a trailer line, or of the final empty line
  Trailer: 9, // inside a trailer line
  TrailerLf: 10, // the LF ending a trailer line
  EndLf: 11, // the LF of the final empty line
} as const;

/** Longest chunk-size line (with extensions), and longest trailer section. */
const MAX_LINE = 4096;
const MAX_TRAILERS = 64 * 1024;
/** Largest chunk accepted (Number keeps integers exact far beyond it). */
const MAX_CHUNK = 2 ** 40;

const CR = 0x0d;
const LF = 0x0a;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20; // a-f and A-F alike
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

export class ChunkedBody {
  private state: number = S.SizeFirst;
  private size = 0;
  private lineBytes = 0;
  private trailerBytes = 0;

  /** Ready for the next body. */
  reset(): void {
    this.state = S.SizeFirst;
    this.size = 0;
    this.lineBytes = 0;
    this.trailerBytes = 0;
  }

  /**
   * Skips body bytes from data[pos]. Returns the position just after the body (its
   * trailer section's empty line) when it ended in `data`, after which the skipper is
   * reset for the next body; -1 when all of `data` was body and more is to come.
   * Throws ParseError on a framing error.
   */
  skip(data: Buffer, pos: number): number {
    const n = data.length;
    while (pos < n) {
      if (this.state === S.Data) {
        const take = Math.min(this.size, n - pos);
        pos += take;
        this.size -= take;
        if (this.size === 0) this.state = S.DataCr;
        continue;
      }
      const c = data[pos++]!;
      switch (this.state) {
        case S.SizeFirst:
        case S.Size: {
          const d = hexValue(c);
          if (d >= 0) {
            this.size = this.size * 16 + d;
            if (this.size > MAX_CHUNK) throw new ParseError("chunk too large");
            this.state = S.Size;
            this.lineBytes++;
          } else if (this.state === S.SizeFirst) throw new ParseError("chunk size is not hex");
          else this.afterSize(c);
          break;
        }
        case S.SizeSpace:
          this.afterSize(c);
          break;
        case S.Extension:
          if (c === CR) this.state = S.SizeLf;
          else if (c === LF) throw new ParseError("bare LF in a chunk extension");
          else if (++this.lineBytes > MAX_LINE) throw new ParseError("chunk-size line too long");
          break;
        case S.SizeLf:
          if (c !== LF) throw new ParseError("chunk-size line without LF");
          this.lineBytes = 0;
          this.state = this.size === 0 ? S.TrailerStart : S.Data;
          break;
        case S.DataCr:
          if (c !== CR) throw new ParseError("chunk data not followed by CRLF");
          this.state = S.DataLf;
          break;
        case S.DataLf:
          if (c !== LF) throw new ParseError("chunk data not followed by CRLF");
          this.state = S.SizeFirst;
          break;
        case S.TrailerStart:
          if (c === CR) this.state = S.EndLf;
          else this.trailerByte(c);
          break;
        case S.Trailer:
          if (c === CR) this.state = S.TrailerLf;
          else this.trailerByte(c);
          break;
        case S.TrailerLf:
          if (c !== LF) throw new ParseError("trailer line without LF");
          this.state = S.TrailerStart;
          break;
        case S.EndLf:
          if (c !== LF) throw new ParseError("chunked body without its final CRLF");
          this.reset();
          return pos;
      }
    }
    return -1;
  }

  /** A byte after at least one size digit: spaces, the start of an extension, or CR. */
  private afterSize(c: number): void {
    if (c === 0x20 || c === 0x09) this.state = S.SizeSpace;
    else if (c === 0x3b) this.state = S.Extension;
    else if (c === CR) this.state = S.SizeLf;
    else throw new ParseError("bad byte after a chunk size");
    if (++this.lineBytes > MAX_LINE) throw new ParseError("chunk-size line too long");
  }

  private trailerByte(c: number): void {
    if (c === LF) throw new ParseError("bare LF in the trailer section");
    this.state = S.Trailer;
    if (++this.trailerBytes > MAX_TRAILERS) throw new ParseError("trailer section too long");
  }
}
