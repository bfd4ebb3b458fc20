// An answer given before the request's body was read (a 413 on an announced length, a
// 401 on a bad key, a 503 when the byte budget is full) must still reach the client.
// Node's HTTP clients (fetch/undici, node:http) write the whole body before they read
// the answer, so a server that answers and then hangs up mid-upload leaves them with
// EPIPE or ECONNRESET instead of the answer (curl reads it anyway). The rest of such a
// body is therefore read and thrown away before the answer goes out: nothing is kept,
// the client finishes sending and then reads the answer on a connection that can stay
// open. A body announced beyond DRAIN_MAX_BYTES is not worth reading: that answer says
// `Connection: close`. The server's request bound (serve.ts) stops a client that
// trickles what we are reading off.
import type { MiddlewareHandler } from "hono";
import { announcedLength, discardRest, DRAIN_MAX_BYTES } from "./read-body.ts";

/** Middleware: after the handler, reads off a body it left unread (see above). */
export function readUnreadBody(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const req = c.req.raw;
    if (req.method === "GET" || req.method === "HEAD" || req.bodyUsed) return;
    const announced = announcedLength(req);
    if (announced === 0) return;
    let read = false;
    if (announced === undefined || announced <= DRAIN_MAX_BYTES) {
      const body = req.body;
      if (body === null) return;
      if (body.locked) return;
      read = await discardRest(body.getReader(), DRAIN_MAX_BYTES);
    }
    if (!read) {
      try {
        c.res.headers.set("connection", "close");
      } catch {
        c.res = new Response(c.res.body, c.res);
        c.res.headers.set("connection", "close");
      }
    }
  };
}
