// The bytes of the open loop's requests (open-loop.ts): a POST's head and body built
// once per connection slot as one Buffer, so sending costs one write of ready bytes.
// A scenario's per-request headers (`perRequest`) are spliced into the head between
// the slot's own fields and its Content-Length line, one allocation and three copies
// per request, instead of building the head anew.
//
// Fields as node:http's client sent them for the old generator: the slot's headers,
// `host` (the URL's host and port) and `connection: keep-alive` unless the headers
// give their own, and always our own `content-length` (one given in the headers is
// dropped: the body's real length is what frames the request). Per-request fields
// replace the slot's fields of the same name, any case, as `{ ...headers, ...extra }`
// did. Names and values are checked as node:http checks them, so a bad one throws
// here instead of going out as a broken or smuggled request.

export interface RequestHead {
  /** The whole request: head and body in one buffer. */
  readonly bytes: Buffer;
  /** The request with `extra` header fields added (replacing the slot's own of the same names). */
  with(extra: Record<string, string>): Buffer;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

function fieldLine(name: string, value: string): string {
  if (!TOKEN.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`);
  if (BAD_VALUE.test(value)) throw new TypeError(`invalid value for header ${JSON.stringify(name)}`);
  return `${name}: ${value}\r\n`;
}

export function requestBytes(host: string, path: string, headers: Record<string, string>, body: Uint8Array): RequestHead {
  if (!/^[\x21-\x7e]+$/.test(path)) throw new TypeError(`invalid request path ${JSON.stringify(path)}`);
  const names = new Set<string>();
  let fields = "";
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === "content-length") continue;
    names.add(lower);
    fields += fieldLine(name, value);
  }
  if (!names.has("host")) fields += fieldLine("host", host);
  if (!names.has("connection")) fields += fieldLine("connection", "keep-alive");
  const head = Buffer.from(`POST ${path} HTTP/1.1\r\n${fields}`, "latin1");
  const tail = Buffer.concat([Buffer.from(`content-length: ${body.byteLength}\r\n\r\n`, "latin1"), body]);
  const bytes = Buffer.concat([head, tail]);
  return {
    bytes,
    with(extra) {
      let lines = "";
      for (const name in extra) {
        const lower = name.toLowerCase();
        // A field the head already has (or content-length): build the merged head anew.
        if (names.has(lower) || lower === "content-length" || lower === "host" || lower === "connection") return requestBytes(host, path, merge(headers, extra), body).bytes;
        lines += fieldLine(name, extra[name]!);
      }
      const size = Buffer.byteLength(lines, "latin1");
      const out = Buffer.allocUnsafe(head.length + size + tail.length);
      head.copy(out, 0);
      out.write(lines, head.length, "latin1");
      tail.copy(out, head.length + size);
      return out;
    },
  };
}

/** `{ ...headers, ...extra }` with names compared in any case (the later one wins). */
function merge(headers: Record<string, string>, extra: Record<string, string>): Record<string, string> {
  const byName = new Map<string, [string, string]>();
  for (const [name, value] of [...Object.entries(headers), ...Object.entries(extra)]) byName.set(name.toLowerCase(), [name, value]);
  return Object.fromEntries(byName.values());
}
