// Starts an HTTP server for a fetch handler on the runtime we are on: Deno.serve on
// Deno, @hono/node-server on Node. Returns the bound port and a close that waits for
// in-flight requests up to a limit.
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

export async function serve(fetch: FetchHandler, opts: { port: number; hostname: string }): Promise<RunningServer> {
  if ("Deno" in globalThis) {
    const server = Deno.serve({ port: opts.port, hostname: opts.hostname, onListen: () => {} }, (req, info) => fetch(req, info));
    return {
      port: server.addr.port,
      close: (graceMs) => Promise.race([server.shutdown(), delay(graceMs)]),
    };
  }
  const { serve: nodeServe } = await import("@hono/node-server");
  return await new Promise<RunningServer>((resolve) => {
    const server = nodeServe({ fetch, port: opts.port, hostname: opts.hostname }, (info) => {
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

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}
