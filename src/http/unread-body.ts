// An answer given before the request's body was read (a 413 on an announced length or
// once a chunked body passes the cap, a 401 on a bad key, a 503 when the byte budget is
// full) must still reach the client. Node's HTTP clients (fetch/undici, node:http)
// write the whole body before they read the answer, so a server that answers and then
// hangs up mid-upload leaves them with EPIPE or ECONNRESET instead of the answer (curl
// reads it anyway). On a real connection the rest of such a body is therefore read and
// thrown away before the answer goes out (nothing is kept): the client finishes sending
// and reads the answer on a connection that can stay open. Bounds: DRAIN_MAX_BYTES
// (beyond it, or for a body announced beyond it, the answer says `Connection: close`),
// and DRAIN_IDLE_MS without a byte (a client that waits for the answer before sending
// more gets it then, with `Connection: close`); the server's request bound (serve.ts)
// still ends a trickle. A Request made in process (app.request, the console's
// playground) has no client waiting on a socket: its unread body is cancelled, not read.
import type { MiddlewareHandler } from "hono";
import { announcedLength, LEFT_UNREAD, MAX_BODY_BYTES } from "./read-body.ts";

/** Most bytes read off and thrown away before an answer: a few over-cap uploads' worth. */
export const DRAIN_MAX_BYTES = 4 * MAX_BODY_BYTES;
/**
 * A client silent this long is waiting for the answer, not sending. Long enough for a
 * sending client that its host stalls (a fetch client on a 2-core host at load 10 was
 * seen silent for over 1.5 s mid-upload, and got EPIPE), short against the request bound.
 */
export const DRAIN_IDLE_MS = 5000;

type Outcome = "done" | "too-much" | "idle";

/** Reads and drops what is left of a stream, within the bounds above. */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Outcome> {
  let seen = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    for (;;) {
      const idle = new Promise<"idle">((resolve) => (timer = setTimeout(() => resolve("idle"), DRAIN_IDLE_MS)));
      const next = await Promise.race([reader.read(), idle]);
      clearTimeout(timer);
      if (next === "idle") return "idle";
      if (next.done) return "done";
      seen += next.value.byteLength;
      if (seen > DRAIN_MAX_BYTES) return "too-much";
    }
  } catch {
    return "done"; // the client went away: nothing left to read, no one to answer
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the request came over a connection (the Node adapter's or Deno's), not from app.request(). */
function onConnection(env: unknown): boolean {
  return typeof env === "object" && env !== null && ("incoming" in env || "remoteAddr" in env);
}

/** Middleware: after the handler, deals with a body it left unread (see above). */
export function readUnreadBody(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const req = c.req.raw;
    if (req.method === "GET" || req.method === "HEAD") return;
    // Cheap on the paid path: a body read in full is "used" and not left unread.
    if (req.bodyUsed && !LEFT_UNREAD.has(req)) return;
    if (announcedLength(req) === 0) return;
    const body = req.body;
    if (body === null || body.locked) return;
    if (!onConnection(c.env)) {
      body.cancel().catch(() => {});
      return;
    }
    const announced = announcedLength(req);
    const outcome: Outcome = announced !== undefined && announced > DRAIN_MAX_BYTES ? "too-much" : await discardRest(body.getReader());
    if (outcome === "done") return;
    try {
      c.res.headers.set("connection", "close");
    } catch {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("connection", "close");
    }
  };
}
