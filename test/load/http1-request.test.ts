// The stand-in product's request parser (http1-request.ts): where each request ends and
// what the stub answers by, fed whole, split at every byte, pipelined, and malformed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Http1RequestParser, type RequestFacts } from "./http1-request.ts";

interface Outcome {
  /** Requests in order; "continue" where a 100-continue was asked for. */
  events: (RequestFacts | "continue")[];
  error?: string;
}

function parse(parts: string[]): Outcome {
  const out: Outcome = { events: [] };
  const p = new Http1RequestParser({ onContinue: () => out.events.push("continue"), onRequest: (f) => out.events.push({ ...f }) });
  for (const part of parts) {
    const e = p.push(Buffer.from(part, "latin1"));
    if (e !== undefined) {
      out.error = e;
      break;
    }
  }
  return out;
}

function splits(s: string): string[][] {
  return Array.from({ length: s.length + 1 }, (_, i) => [s.slice(0, i), s.slice(i)]);
}

// As the gateway's node:http client sends it.
const LENGTH =
  "POST /internal/product HTTP/1.1\r\ncontent-type: multipart/form-data; boundary=x\r\nx-pd-request-id: req-1\r\nauthorization: Bearer t\r\n" +
  "content-length: 13\r\nHost: 127.0.0.1:4000\r\nConnection: keep-alive\r\n\r\n--x\r\nbody--\r\n";
const CHUNKED = "POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX-PD-Request-Id: req-2\r\n\r\n4\r\nwiki\r\n5;e=1\r\npedia\r\n0\r\nT: 1\r\n\r\n";
const NO_BODY = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

const facts = (requestId: string, keepAlive = true): RequestFacts => ({ requestId, keepAlive });

test("a Content-Length request, split at every byte: its id, after its whole body", () => {
  for (const parts of splits(LENGTH)) assert.deepEqual(parse(parts), { events: [facts("req-1")] }, JSON.stringify(parts));
  assert.deepEqual(parse([LENGTH.slice(0, -1)]), { events: [] }, "not before the body's last byte");
});

test("a chunked request, split at every byte", () => {
  for (const parts of splits(CHUNKED)) assert.deepEqual(parse(parts), { events: [facts("req-2")] }, JSON.stringify(parts));
  assert.deepEqual(parse([CHUNKED.slice(0, -1)]), { events: [] });
});

test("pipelined requests in one chunk, and split at every byte, reported in order", () => {
  const three = LENGTH + CHUNKED + NO_BODY;
  const expected = { events: [facts("req-1"), facts("req-2"), facts("")] };
  assert.deepEqual(parse([three]), expected);
  for (const parts of splits(three)) assert.deepEqual(parse(parts), expected, JSON.stringify(parts));
});

test("empty lines before a request line are skipped", () => {
  assert.deepEqual(parse(["\r\n" + NO_BODY + "\r\n", "\r\n" + NO_BODY]), { events: [facts(""), facts("")] });
});

test("repeated request ids are joined, as Node joins them", () => {
  assert.deepEqual(parse(["POST / HTTP/1.1\r\nX-Pd-Request-Id: a\r\nx-pd-request-id: b\r\n\r\n"]).events, [facts("a, b")]);
});

test("Connection: close (and HTTP/1.0) ends the connection's requests; what follows is not read", () => {
  assert.deepEqual(parse(["POST / HTTP/1.1\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx" + NO_BODY]), { events: [facts("", false)] });
  assert.deepEqual(parse(["POST / HTTP/1.0\r\n\r\n" + NO_BODY]), { events: [facts("", false)] });
  assert.deepEqual(parse(["POST / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + NO_BODY]), { events: [facts(""), facts("")] });
});

test("Expect: 100-continue is reported once the head is read, before the body", () => {
  const s = "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
  assert.deepEqual(parse([s]), { events: ["continue"] });
  assert.deepEqual(parse([s, "abc"]), { events: ["continue", facts("")] });
});

test("malformed requests are errors, and the parser stays failed", () => {
  const bad: [string, string][] = [
    ["not a request line", "hello\r\n\r\n"],
    ["no version", "POST /\r\n\r\n"],
    ["HTTP/2", "POST / HTTP/2.0\r\n\r\n"],
    ["a space in the target", "POST /a b HTTP/1.1\r\n\r\n"],
    ["a field without a colon", "POST / HTTP/1.1\r\nHost x\r\n\r\n"],
    ["a bare LF", "POST / HTTP/1.1\nHost: x\r\n\r\n"],
    ["a bad Content-Length", "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc"],
    ["conflicting Content-Lengths", "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"],
    ["chunked and Content-Length", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"],
    ["a coding other than chunked last", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"],
    ["a bad chunk size", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n"],
    ["chunk data not followed by CRLF", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n"],
  ];
  for (const [what, s] of bad) {
    for (const parts of [[s], splits(s)[Math.floor(s.length / 2)]!, [...s]]) {
      assert.ok(parse(parts).error, `${what}: an error for ${JSON.stringify(parts)}`);
    }
  }
  const p = new Http1RequestParser({ onContinue: () => {}, onRequest: () => assert.fail("nothing reported after an error") });
  assert.ok(p.push(Buffer.from("hello\r\n\r\n")));
  assert.ok(p.push(Buffer.from(NO_BODY)), "still failed");
});

test("requests before a malformed one are reported", () => {
  const o = parse([NO_BODY + LENGTH + "hello\r\n\r\n" + NO_BODY]);
  assert.deepEqual(o.events, [facts(""), facts("req-1")]);
  assert.ok(o.error);
});

test("idle: between requests only", () => {
  const p = new Http1RequestParser({ onContinue: () => {}, onRequest: () => {} });
  assert.equal(p.idle, true);
  p.push(Buffer.from(LENGTH.slice(0, 10)));
  assert.equal(p.idle, false, "inside a head");
  p.push(Buffer.from(LENGTH.slice(10, -3)));
  assert.equal(p.idle, false, "inside a body");
  p.push(Buffer.from(LENGTH.slice(-3)));
  assert.equal(p.idle, true);
});
