// The refusals' baseline (bench/refusals.ts, and the refusal rows of `npm run test:load`):
// a bare Hono app that answers every POST /v1.0/removebg with the spec's error envelope
// and a request ID, and does nothing else (no key check, no log, no metrics, no reading
// of the body). A body announced over the cap gets the 413, anything else the 401. It
// runs on the same server as ours on each runtime: @hono/node-server under Node,
// Deno.serve under Deno.
//   node --import tsx bench/refusals-bare.ts    |    deno run -A bench/refusals-bare.ts
// Prints {"port":N} once listening on 127.0.0.1; SIGTERM stops it.
import { Hono } from "hono";

const CAP = 12_000_000;
const app = new Hono();
let n = 0;
app.post("/v1.0/removebg", (c) => {
  c.header("x-pd-request-id", `bare-${Date.now().toString(36)}-${(n++).toString(36)}`);
  if (Number(c.req.header("content-length") ?? 0) > CAP) {
    return c.json({ errors: [{ title: "Request body is larger than 12,000,000 bytes", code: "file_too_large" }] }, 413);
  }
  return c.json({ errors: [{ title: "Missing API key: send it in the X-Api-Key header", code: "invalid_api_key" }] }, 401);
});

declare const Deno: {
  serve(o: { port: number; hostname: string; onListen(a: { port: number }): void }, h: (req: Request) => Response | Promise<Response>): { shutdown(): Promise<void> };
  addSignalListener(signal: string, fn: () => void): void;
  exit(code: number): never;
};

const listening = (port: number) => console.log(JSON.stringify({ port }));
if ("Deno" in globalThis) {
  // Deno.serve stops reading a body nobody read and keeps the connection: a client still
  // uploading would wait forever, so an answer to an unread body closes it (as Node's does).
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: (a) => listening(a.port) }, async (req) => {
    const res = await app.fetch(req);
    if (req.body !== null && !req.bodyUsed) res.headers.set("connection", "close");
    return res;
  });
  Deno.addSignalListener("SIGTERM", () => void server.shutdown().then(() => Deno.exit(0)));
} else {
  const { serve } = await import("@hono/node-server");
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => listening(info.port));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}
