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
//
// Refusals are what a flood of bad traffic gets, so on Node the body is read off the
// connection's IncomingMessage (Hono's env.incoming) and not through the Request's body:
// @hono/node-server builds its Request lazily, and the first touch of `body` (or
// `signal`) makes a full web Request, an AbortSignal and a web stream over the socket,
// which was a quarter of a refusal's CPU. Only where something already reads the body
// through that stream (a chunked upload stopped at the cap) is the rest read the same way.
// Deno.serve has no IncomingMessage: there the Request's own body is read (a small one
// whole, in one call), and READ_TO_END tells serve.ts the connection may stay open.
import type { MiddlewareHandler } from "hono";
import { quietPromise, watchQuiet } from "./idle-watch.ts";
import { announcedLength, LEFT_UNREAD, lengthOf, MAX_BODY_BYTES } from "./read-body.ts";

/** Most bytes read off and thrown away before an answer: a few over-cap uploads' worth. */
export const DRAIN_MAX_BYTES = 4 * MAX_BODY_BYTES;
/**
 * A client silent this long is waiting for the answer, not sending. Long enough for a
 * sending client that its host stalls (a fetch client on a 2-core host at load 10 was
 * seen silent for over 1.5 s mid-upload, and got EPIPE), short against the request bound.
 */
export const DRAIN_IDLE_MS = 5000;

export interface DrainBounds {
  maxBytes: number;
  idleMs: number;
}

type Outcome = "done" | "too-much" | "idle";

/**
 * Requests on a Deno connection whose body was read to its end here (or had none): their
 * connection can stay open. serve.ts closes it after any other refused body, since
 * Deno.serve stops reading a body left unread and would keep a sending client waiting.
 */
export const READ_TO_END = new WeakSet<Request>();

/** The part of Node's IncomingMessage read here (structural: nothing of node:http is loaded). */
interface Incoming {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly complete: boolean;
  readonly readableFlowing: boolean | null;
  readonly readableDidRead: boolean;
  on(event: "data", fn: (chunk: { byteLength: number }) => void): unknown;
  on(event: "end" | "error" | "close", fn: () => void): unknown;
  off(event: string, fn: (...a: never[]) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** The IncomingMessage @hono/node-server passes as env.incoming; undefined on Deno and in process. */
function incomingOf(env: unknown): Incoming | undefined {
  const incoming = typeof env === "object" && env !== null ? (env as { incoming?: Partial<Incoming> }).incoming : undefined;
  return typeof incoming?.resume === "function" && typeof incoming.on === "function" ? (incoming as Incoming) : undefined;
}

/** Deno.serve's handler info (remoteAddr): a connection, but no IncomingMessage. */
function onDenoConnection(env: unknown): boolean {
  return typeof env === "object" && env !== null && "remoteAddr" in env;
}

/**
 * Reads and drops what is left of the message, within the bounds. A message already
 * complete has all its bytes here: they are let go (dropped as they flow) and the answer
 * need not wait for them.
 */
function discardIncoming(incoming: Incoming, bounds: DrainBounds): Outcome | Promise<Outcome> {
  if (incoming.complete) {
    incoming.resume();
    return "done";
  }
  return new Promise((resolve) => {
    let seen = 0;
    const quiet = watchQuiet(bounds.idleMs, () => finish("idle"));
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      quiet.stop();
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onEnd);
      incoming.off("close", onEnd);
      // Past a bound nothing more is read: the answer closes the connection.
      if (outcome !== "done") incoming.pause();
      resolve(outcome);
    };
    const onData = (chunk: { byteLength: number }) => {
      seen += chunk.byteLength;
      quiet.stir();
      if (seen > bounds.maxBytes) finish("too-much");
    };
    // An error or a close: the client went away, nothing left to read and no one to answer.
    const onEnd = () => finish("done");
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onEnd);
    incoming.on("close", onEnd);
    incoming.resume();
  });
}

/** Reads and drops what is left of a web stream, within the bounds. */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, bounds: DrainBounds): Promise<Outcome> {
  let seen = 0;
  const quiet = quietPromise(bounds.idleMs);
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), quiet.idle]);
      if (next === "idle") return "idle";
      if (next.done) return "done";
      quiet.stir();
      seen += next.value.byteLength;
      if (seen > bounds.maxBytes) return "too-much";
    }
  } catch {
    return "done"; // the client went away: nothing left to read, no one to answer
  } finally {
    quiet.stop();
  }
}

/**
 * On Deno an announced body this small is read whole in one call: the runtime reads it
 * without a stream's reads (a sixth less of a refusal's time than the stream), and at
 * most this much is held for a moment.
 */
const SMALL_BODY_BYTES = 64 * 1024;

async function readWhole(req: Request, bounds: DrainBounds): Promise<Outcome> {
  const quiet = quietPromise(bounds.idleMs);
  try {
    return await Promise.race([req.arrayBuffer().then(DONE, DONE), quiet.idle]);
  } finally {
    quiet.stop();
  }
}

const DONE = (): Outcome => "done";

/** Whether nothing has read the message yet (no web stream over it, no direct read). */
function untouched(incoming: Incoming): boolean {
  return incoming.readableFlowing === null && !incoming.readableDidRead;
}

/** Middleware: after the handler, deals with a body it left unread (see above). */
export function readUnreadBody(bounds: DrainBounds = { maxBytes: DRAIN_MAX_BYTES, idleMs: DRAIN_IDLE_MS }): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const req = c.req.raw;
    if (req.method === "GET" || req.method === "HEAD") return;
    // Cheap on the paid path: a body read in full is "used" and not left unread.
    if (req.bodyUsed && !LEFT_UNREAD.has(req)) return;
    const incoming = incomingOf(c.env);
    const deno = !incoming && onDenoConnection(c.env);
    const outcome = await drain(req, incoming, deno, bounds);
    if (outcome === undefined) return;
    if (outcome === "done") {
      if (deno) READ_TO_END.add(req);
      return;
    }
    try {
      c.res.headers.set("connection", "close");
    } catch {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("connection", "close");
    }
  };
}

/** How the rest of the body went; undefined when there is no client on a connection to read it for. */
async function drain(req: Request, incoming: Incoming | undefined, deno: boolean, bounds: DrainBounds): Promise<Outcome | undefined> {
  // On Node the parsed head is read as it is (the Request's headers are made on demand).
  const announced = incoming ? lengthOf(incoming.headers["content-length"] as string | undefined) : announcedLength(req);
  if (announced === 0) return "done";
  const connected = incoming !== undefined || deno;
  if (connected && announced !== undefined && announced > bounds.maxBytes) return "too-much";
  if (incoming && untouched(incoming)) return discardIncoming(incoming, bounds);
  if (deno && announced !== undefined && announced <= SMALL_BODY_BYTES && !req.bodyUsed) return readWhole(req, bounds);
  const body = req.body;
  if (body === null) return "done";
  if (body.locked) return undefined;
  if (!connected) {
    body.cancel().catch(() => {});
    return undefined;
  }
  return discardRest(body.getReader(), bounds);
}
