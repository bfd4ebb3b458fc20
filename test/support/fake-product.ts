// A stand-in for the product process in a split deployment (the gateway's PRODUCT_URL
// points here) that answers badly on purpose: garbage in one of several shapes, or
// nothing at all. node:http rather than a fetch handler, because the interesting
// failures (a body cut off mid-way, a connection reset, a socket that never answers)
// happen below the level a Response can express.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export type FakeMode =
  /** 200 with Content-Type text/html. */
  | "wrong-content-type"
  /** 200 image/png announcing the whole PNG, sending half of it, then closing. */
  | "truncated-png"
  /** 200 image/png, signature intact, cut before IEND, but complete by Content-Length. */
  | "short-png"
  /** 200 image/png whose X-Width/X-Height claim a full-tier size the PNG does not have. */
  | "lying-dimensions"
  /** 500 with a body that is not JSON. */
  | "invalid-json-error"
  /** 200 headers and part of the body, then a TCP reset. */
  | "reset-mid-body"
  /** Reads the request and never answers. */
  | "hang"
  /** A real PNG with correct headers (the control case). */
  | "good";

export interface FakeProduct {
  url: string;
  mode: FakeMode;
  /** Requests received so far. */
  requests: number;
  close(): Promise<void>;
}

/** `png` is a real PNG of `width`×`height` (the answer "good" gives). */
export async function startFakeProduct(png: Uint8Array, width: number, height: number): Promise<FakeProduct> {
  const sockets = new Set<Socket>();
  const fake: FakeProduct = { url: "", mode: "good", requests: 0, close: async () => {} };
  const imageHeaders = (w: number, h: number) => ({ "content-type": "image/png", "x-width": String(w), "x-height": String(h), "x-processing-ms": "5" });

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    fake.requests++;
    // Read the upload first, as the real product does, so the gateway's send completes.
    req.resume();
    req.on("end", () => {
      switch (fake.mode) {
        case "good":
          res.writeHead(200, { ...imageHeaders(width, height), "content-length": png.length });
          res.end(png);
          return;
        case "wrong-content-type":
          res.writeHead(200, { "content-type": "text/html", "x-width": String(width), "x-height": String(height) });
          res.end("<html>hello</html>");
          return;
        case "truncated-png":
          res.writeHead(200, { ...imageHeaders(width, height), "content-length": png.length });
          res.write(png.subarray(0, png.length >> 1));
          res.socket?.end();
          return;
        case "short-png": {
          const cut = png.subarray(0, Math.max(16, png.length - 20));
          res.writeHead(200, { ...imageHeaders(width, height), "content-length": cut.length });
          res.end(cut);
          return;
        }
        case "lying-dimensions":
          res.writeHead(200, { ...imageHeaders(4000, 3000), "content-length": png.length });
          res.end(png);
          return;
        case "invalid-json-error":
          res.writeHead(500, { "content-type": "application/json" });
          res.end("{\"errors\": [ oops");
          return;
        case "reset-mid-body":
          res.writeHead(200, { ...imageHeaders(width, height), "content-length": png.length });
          res.write(png.subarray(0, 32), () => res.socket?.resetAndDestroy());
          return;
        case "hang":
          return; // never answers; the socket stays open until the gateway gives up
      }
    });
  };

  const server: Server = createServer(handle);
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  fake.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return fake;
}
