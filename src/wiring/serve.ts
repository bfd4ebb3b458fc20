// Starts an HTTP server for a fetch handler on the runtime we are on: Deno.serve on
// Deno, @hono/node-server on Node. Returns the bound port and a close that waits for
// in-flight requests up to a limit.
import { READ_TO_END } from "../http/unread-body.ts";

type FetchHandler = (req: Request, env?: unknown) => Response | Promise<Response>;

export interface RunningServer {
  port: number;
  close(graceMs: number): Promise<void>;
}

declare const Deno: {
  serve(
    opts: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
    handler: (req: Request, info: unknown) => Response | Promise<Response>,
  ): { shutdown(): Promise<void>; finished: Promise<void>; addr: { port: number } };
};

/**
 * Slow-client bounds (Node only). A client that trickles its headers, or its body, holds
 * a socket and (for the body) its share of the gateway's byte budget; Node's defaults
 * (60 s for headers, 300 s for the whole request, checked every 30 s) let 22 slow
 * uploads keep the 256 MB budget full for five minutes at a time. Both bounds stop at
 * the end of the request: processing time afterwards is not limited by them.
 */
export const SLOW_CLIENT_DEFAULTS = {
  /** Until the last header line: generous for any real client. */
  headersTimeoutMs: 20_000,
  /** Until the last body byte: 12 MB in 120 s needs 100 kB/s; leaves room in the 140 s deadline. */
  requestTimeoutMs: 120_000,
  /** How often Node checks the two above. */
  checkIntervalMs: 2_000,
};

export interface ServeOptions {
  port: number;
  hostname: string;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  checkIntervalMs?: number;
}

export async function serve(fetch: FetchHandler, opts: ServeOptions): Promise<RunningServer> {
  if ("Deno" in globalThis) {
    const server = Deno.serve({ port: opts.port, hostname: opts.hostname, onListen: () => {} }, async (req, info) =>
      closeAfterRefusedBody(req, await fetch(req, info)),
    );
    return {
      port: server.addr.port,
      close: (graceMs) => Promise.race([server.shutdown(), delay(graceMs)]),
    };
  }
  const { serve: nodeServe } = await import("@hono/node-server");
  return await new Promise<RunningServer>((resolve) => {
    const limits = { ...SLOW_CLIENT_DEFAULTS, ...definedOnly(opts) };
    const serverOptions = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    };
    const server = nodeServe({ fetch, port: opts.port, hostname: opts.hostname, serverOptions }, (info) => {
      resolve({
        port: info.port,
        close: (graceMs) => {
          const closed = new Promise<void>((done) => server.close(() => done()));
          // close() drops the connections idle at that moment; a request still in
          // flight leaves a keep-alive socket behind when it ends, which would hold
          // the close until the client's idle timeout. Drop those as they go idle.
          const idle = "closeIdleConnections" in server ? setInterval(() => server.closeIdleConnections(), 100) : undefined;
          return Promise.race([closed, delay(graceMs)]).finally(() => clearInterval(idle));
        },
      });
    });
  });
}

/**
 * Deno.serve, unlike Node, keeps the connection open after answering a request whose body
 * it has not read: it stops reading, so a client still uploading (a 413 mid-stream, a 401
 * before the body) waits forever for the answer's end of connection. An error answer to a
 * request that carries a body therefore closes the connection, as Node's server does,
 * unless the app read that body to its end (unread-body.ts): a refused client that sent
 * its whole request keeps its connection, as it does on Node.
 */
function closeAfterRefusedBody(req: Request, res: Response): Response {
  if (res.status < 400 || READ_TO_END.has(req) || req.body === null || res.headers.get("connection") === "close") return res;
  const headers = new Headers(res.headers);
  headers.set("connection", "close");
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

function definedOnly(o: ServeOptions): Partial<typeof SLOW_CLIENT_DEFAULTS> {
  const out: Partial<typeof SLOW_CLIENT_DEFAULTS> = {};
  if (o.headersTimeoutMs !== undefined) out.headersTimeoutMs = o.headersTimeoutMs;
  if (o.requestTimeoutMs !== undefined) out.requestTimeoutMs = o.requestTimeoutMs;
  if (o.checkIntervalMs !== undefined) out.checkIntervalMs = o.checkIntervalMs;
  return out;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}
