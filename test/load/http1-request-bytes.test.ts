// The open loop's request bytes (http1-request-bytes.ts): the head as node:http sent it,
// per-request fields spliced in, and bad names or values refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { requestBytes } from "./http1-request-bytes.ts";

const body = new Uint8Array([0x61, 0x00, 0xff, 0x0d, 0x0a]);
const text = (b: Buffer) => b.toString("latin1");
const bodyText = Buffer.from(body).toString("latin1");

test("one buffer: request line, the slot's fields, host, connection, content-length, body", () => {
  const r = requestBytes("127.0.0.1:8080", "/v1.0/removebg?x=1", { "x-api-key": "k1", "Content-Type": "multipart/form-data; boundary=b" }, body);
  assert.equal(
    text(r.bytes),
    "POST /v1.0/removebg?x=1 HTTP/1.1\r\nx-api-key: k1\r\nContent-Type: multipart/form-data; boundary=b\r\nhost: 127.0.0.1:8080\r\nconnection: keep-alive\r\ncontent-length: 5\r\n\r\n" + bodyText,
  );
});

test("the headers' own host and connection are kept; their content-length is replaced by the body's", () => {
  const r = requestBytes("h:1", "/", { Host: "other", connection: "close", "Content-Length": "99" }, body);
  assert.equal(text(r.bytes), "POST / HTTP/1.1\r\nHost: other\r\nconnection: close\r\ncontent-length: 5\r\n\r\n" + bodyText);
});

test("per-request fields are spliced in before content-length", () => {
  const r = requestBytes("h:1", "/", { "x-api-key": "k" }, body);
  const before = text(r.bytes);
  assert.equal(text(r.with({ "x-forwarded-for": "10.77.0.1", "x-n": "7" })), "POST / HTTP/1.1\r\nx-api-key: k\r\nhost: h:1\r\nconnection: keep-alive\r\nx-forwarded-for: 10.77.0.1\r\nx-n: 7\r\ncontent-length: 5\r\n\r\n" + bodyText);
  assert.equal(text(r.bytes), before, "the slot's bytes are untouched");
  assert.equal(text(r.with({})), before);
});

test("a per-request field replaces the slot's field of the same name, any case", () => {
  const r = requestBytes("h:1", "/", { "X-Forwarded-For": "10.78.0.1", "x-api-key": "k" }, body);
  assert.equal(text(r.with({ "x-forwarded-for": "10.77.0.2" })), "POST / HTTP/1.1\r\nx-forwarded-for: 10.77.0.2\r\nx-api-key: k\r\nhost: h:1\r\nconnection: keep-alive\r\ncontent-length: 5\r\n\r\n" + bodyText);
  assert.equal(text(r.with({ HOST: "elsewhere" })), "POST / HTTP/1.1\r\nX-Forwarded-For: 10.78.0.1\r\nx-api-key: k\r\nHOST: elsewhere\r\nconnection: keep-alive\r\ncontent-length: 5\r\n\r\n" + bodyText);
});

test("names and values node:http would refuse are refused", () => {
  assert.throws(() => requestBytes("h", "/", { "bad name": "v" }, body), TypeError);
  assert.throws(() => requestBytes("h", "/", { x: "a\r\nx-injected: 1" }, body), TypeError);
  assert.throws(() => requestBytes("h", "/a b", {}, body), TypeError);
  const r = requestBytes("h", "/", {}, body);
  assert.throws(() => r.with({ x: "a\nb" }), TypeError);
  assert.throws(() => r.with({ "x:y": "1" }), TypeError);
});
