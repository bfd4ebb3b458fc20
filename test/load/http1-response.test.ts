// The open loop's response parser (http1-response.ts): where each response ends, fed
// whole, split at every byte (and every pair of bytes for the chunked sample), byte by
// byte, back to back, and malformed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Http1ResponseParser } from "./http1-response.ts";

interface Outcome {
  responses: [number, boolean][];
  error?: string;
  /** finish()'s status when `close` was asked for. */
  atClose?: number;
}

function parse(parts: (string | Buffer)[], o: { close?: boolean } = {}): Outcome {
  const out: Outcome = { responses: [] };
  const p = new Http1ResponseParser((status, keepAlive) => out.responses.push([status, keepAlive]));
  for (const part of parts) {
    const e = p.push(typeof part === "string" ? Buffer.from(part, "latin1") : part);
    if (e !== undefined) {
      out.error = e;
      break;
    }
  }
  if (o.close) out.atClose = p.finish();
  return out;
}

/** Every way of cutting `s` in two (and the whole, and the empty first part). */
function splits(s: string): string[][] {
  return Array.from({ length: s.length + 1 }, (_, i) => [s.slice(0, i), s.slice(i)]);
}

/** `s` in pieces of `n` bytes. */
function pieces(s: string, n: number): string[] {
  return Array.from({ length: Math.ceil(s.length / n) }, (_, i) => s.slice(i * n, (i + 1) * n));
}

const LENGTH = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 10\r\nX-Pd-Request-Id: abc\r\n\r\n0123456789";
const CHUNKED =
  "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n" +
  "5\r\nhello\r\n" +
  "A ; name=value;x\r\n0123456789\r\n" +
  "1a\r\nabcdefghijklmnopqrstuvwxyz\r\n" + // two hex digits: 26 bytes
  "1\r\n\r\r\n" + // a chunk holding a CR, so a CR inside data is not taken as framing
  "00\r\n" +
  "X-Checksum: abc\r\nX-Other: 1\r\n\r\n";
const CLOSE = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nbody until the socket closes\r\n\r\n";

test("a Content-Length response, split at every byte", () => {
  for (const parts of splits(LENGTH)) assert.deepEqual(parse(parts), { responses: [[200, true]] }, JSON.stringify(parts));
});

test("the body is counted, not searched: a response is not complete one byte early", () => {
  const o = parse([LENGTH.slice(0, -1)]);
  assert.deepEqual(o.responses, []);
});

test("a chunked response with extensions, a CR in the data and trailers, split at every pair of points", () => {
  const s = CHUNKED;
  for (let i = 0; i <= s.length; i++) {
    for (let j = i; j <= s.length; j++) {
      const parts = [s.slice(0, i), s.slice(i, j), s.slice(j)];
      assert.deepEqual(parse(parts), { responses: [[201, true]] }, JSON.stringify(parts));
    }
  }
});

test("a chunked response fed byte by byte, and one that stops before its last CRLF", () => {
  assert.deepEqual(parse(pieces(CHUNKED, 1)), { responses: [[201, true]] });
  assert.deepEqual(parse([CHUNKED.slice(0, -1)]), { responses: [] });
  assert.deepEqual(parse([CHUNKED.slice(0, -2)]), { responses: [] });
});

test("a response ending at the close (Connection: close, no length): split at every byte, complete only at finish()", () => {
  for (const parts of splits(CLOSE)) assert.deepEqual(parse(parts, { close: true }), { responses: [], atClose: 200 }, JSON.stringify(parts));
  // Neither length nor chunked without Connection: close ends at the close too.
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\n\r\nsome", " more"], { close: true }), { responses: [], atClose: 200 });
  // A Transfer-Encoding other than chunked last: to the close.
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx"], { close: true }), { responses: [], atClose: 200 });
});

test("a close cuts a response short: finish() reports nothing", () => {
  assert.equal(parse([LENGTH.slice(0, 30)], { close: true }).atClose, -1);
  assert.equal(parse([LENGTH.slice(0, -3)], { close: true }).atClose, -1);
  assert.equal(parse([CHUNKED.slice(0, -5)], { close: true }).atClose, -1);
  assert.equal(parse([LENGTH], { close: true }).atClose, -1, "a complete keep-alive response is not reported twice");
});

test("two responses back to back in one chunk, and split at every byte", () => {
  const both = LENGTH + CHUNKED;
  assert.deepEqual(parse([both]), { responses: [[200, true], [201, true]] });
  for (const parts of splits(both)) assert.deepEqual(parse(parts), { responses: [[200, true], [201, true]] }, JSON.stringify(parts));
  assert.deepEqual(parse([CHUNKED + CHUNKED]), { responses: [[201, true], [201, true]] });
  const three = CHUNKED + LENGTH + "HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\n{}";
  assert.deepEqual(parse([three]), { responses: [[201, true], [200, true], [404, true]] });
});

test("field names and codings in any case", () => {
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 3\r\n\r\nabc"]), { responses: [[200, true]] });
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\ntransfer-ENCODING:  Chunked \r\n\r\n0\r\n\r\n"]), { responses: [[200, true]] });
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\nContent-length:0\r\n\r\n"]), { responses: [[200, false]] });
  // Repeated Transfer-Encoding fields: the last coding decides.
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"]), { responses: [[200, true]] });
  // Repeated Content-Length fields that agree.
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nab"]), { responses: [[200, true]] });
});

test("keep-alive by version and Connection", () => {
  assert.deepEqual(parse(["HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"]).responses, [[200, false]]);
  assert.deepEqual(parse(["HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"]).responses, [[200, false]]);
  assert.deepEqual(parse(["HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n"]).responses, [[200, true]]);
});

test("204 and 304 have no body; 1xx is skipped; a reason phrase may be empty or absent", () => {
  assert.deepEqual(parse(["HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n" + LENGTH]).responses, [[204, true], [200, true]]);
  assert.deepEqual(parse(["HTTP/1.1 304 Not Modified\r\n\r\n" + LENGTH]).responses, [[304, true], [200, true]]);
  for (const parts of splits("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + LENGTH)) {
    assert.deepEqual(parse(parts), { responses: [[200, true]] }, JSON.stringify(parts));
  }
  assert.deepEqual(parse(["HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\nHTTP/1.1 500\r\nContent-Length: 0\r\n\r\n"]).responses, [[200, true], [500, true]]);
});

test("malformed responses are errors, and the parser stays failed", () => {
  const bad: [string, string][] = [
    ["not a status line", "HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n"],
    ["HTTP/2", "HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n"],
    ["status out of range", "HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n"],
    ["garbage", "hello\r\n\r\n"],
    ["a field without a colon", "HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n"],
    ["space before the colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n"],
    ["a folded line", "HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 0\r\n\r\n"],
    ["a bare LF in the head", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n"],
    ["a bare CR in a value", "HTTP/1.1 200 OK\r\nX-A: 1\r2\r\nContent-Length: 0\r\n\r\n"],
    ["a bad Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\n"],
    ["a negative Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"],
    ["Content-Length lists", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nab"],
    ["conflicting Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc"],
    ["chunked and Content-Length", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"],
    ["a chunk size that is not hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
    ["an empty chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n"],
    ["a chunk size with a bare LF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n"],
    ["chunk data longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n"],
    ["chunk data followed by LF without CR", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\n0\r\n\r\n"],
    ["a bare LF after the last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\n"],
    ["a huge chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffff\r\n"],
    ["101", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"],
    ["data after a closing response", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n"],
    ["a head that never ends", `HTTP/1.1 200 OK\r\n${"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(2000)}`],
  ];
  for (const [what, s] of bad) {
    for (const parts of [[s], splits(s)[Math.floor(s.length / 2)]!, pieces(s, s.length < 1000 ? 1 : 1000)]) {
      const o = parse(parts);
      assert.ok(o.error, `${what}: an error (${JSON.stringify(o)}) for ${JSON.stringify(parts).slice(0, 200)}`);
    }
  }
  const p = new Http1ResponseParser(() => assert.fail("nothing reported after an error"));
  assert.ok(p.push(Buffer.from("HTTP/1.1 abc\r\n\r\n")));
  assert.ok(p.push(Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")), "still failed");
});

test("a response before the error is reported; the error stops the rest", () => {
  const o = parse([LENGTH + "HTTP/1.1 abc\r\n\r\n" + LENGTH]);
  assert.deepEqual(o.responses, [[200, true]]);
  assert.ok(o.error);
});

test("idle: between responses only", () => {
  const p = new Http1ResponseParser(() => {});
  assert.equal(p.idle, true);
  p.push(Buffer.from(LENGTH.slice(0, 5)));
  assert.equal(p.idle, false, "inside a head");
  p.push(Buffer.from(LENGTH.slice(5, -2)));
  assert.equal(p.idle, false, "inside a body");
  p.push(Buffer.from(LENGTH.slice(-2)));
  assert.equal(p.idle, true);
});
