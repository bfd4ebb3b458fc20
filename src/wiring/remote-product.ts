// The split deployment (PRODUCT_URL): a gateway process sends each product attempt to
// another process's internal product endpoint. That endpoint does no billing of its
// own, so it is served only to callers holding the deployment's operator token; the
// gateway presents it here, and app.ts checks it on the product side.
//
// On Node the message goes out through node:http with a keep-alive agent: in the paid
// load's CPU profile, fetch (undici's Request, Response and web streams) was about a
// sixth of the gateway's time. Deno keeps fetch, which is native there.
import type { Agent, IncomingMessage } from "node:http";
import { replyOf, type ProductMessage, type ProductReply, type ProductSender } from "../gateway/product-http.ts";

export function remoteProduct(baseUrl: string, operatorToken: string): ProductSender {
  const authorization = `Bearer ${operatorToken}`;
  if ("Deno" in globalThis) {
    return async (msg, signal) =>
      // Sent as bytes (the gateway holds the whole body anyway) so the product sees its
      // Content-Length and charges its receive budget the real size, not the 12 MB cap.
      replyOf(await fetch(new URL(msg.path, baseUrl), { method: "POST", headers: { ...msg.headers, authorization }, body: msg.body, signal }));
  }
  let http: Promise<{ agent: Agent; request: typeof import("node:http").request }> | undefined;
  const load = () =>
    (http ??= import("node:http").then((m) => ({ agent: new m.Agent({ keepAlive: true }), request: m.request })));
  return async (msg, signal) => {
    const { agent, request } = await load();
    return send(request, agent, new URL(msg.path, baseUrl), msg, authorization, signal);
  };
}

function send(
  request: typeof import("node:http").request,
  agent: Agent,
  url: URL,
  msg: ProductMessage,
  authorization: string,
  signal: AbortSignal,
): Promise<ProductReply> {
  return new Promise<ProductReply>((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      agent,
      signal,
      // With Content-Length the product charges its receive budget the real size.
      headers: { ...msg.headers, authorization, "content-length": String(msg.body.byteLength) },
    });
    let answered = false;
    // Before the status line, an error means the product was never reached (resendable);
    // after it, the same socket error (a reset mid-body fires on the request too) is a
    // malformed answer, settled by the response's own events below: never resent.
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    req.on("response", (res: IncomingMessage) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      // A body that breaks off reads as empty: the answer arrived, so it is malformed
      // (not resent), as replyOf does for fetch.
      const done = (complete: boolean) => {
        const body = complete ? new Uint8Array(Buffer.concat(chunks)) : new Uint8Array(0);
        resolve({ status: res.statusCode ?? 0, header: (name) => headerOf(res, name), body });
      };
      res.on("end", () => done(true));
      res.on("aborted", () => done(false));
      res.on("error", () => done(false));
      res.on("close", () => done(res.complete)); // after "end" this changes nothing
    });
    req.end(msg.body);
  });
}

function headerOf(res: IncomingMessage, name: string): string | null {
  const v = res.headers[name.toLowerCase()];
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(", ") : v;
}
