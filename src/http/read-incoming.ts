// The request body read straight from Node's IncomingMessage (what @hono/node-server
// passes as env.incoming), with the same cap and answers as readBodyCapped's web-stream
// path. Why: the web path asks the adapter for Request.body, which makes it build a full
// undici Request (headers, AbortSignal) and a ReadableStream over the socket, then pull
// every chunk through promise callbacks; on the paid path under load (issue 14,
// test/load/profile-gateway.ts) that was about a tenth of the gateway's CPU for a body
// of a few kilobytes. The adapter cleans up after the answer from the IncomingMessage's
// own state (it drains what is left unread), so reading it here leaves nothing behind.
import type { Readable } from "node:stream";
import { fail, type Failure } from "./api-error.ts";

/** The Node request under a Hono request, when the runtime is @hono/node-server and nobody has read the body yet. */
export function unreadIncoming(env: unknown): Readable | undefined {
  const incoming = (env as { incoming?: Readable } | undefined)?.incoming;
  if (!incoming || typeof incoming.on !== "function" || incoming.readableDidRead || incoming.readableEnded) return undefined;
  return incoming;
}

/** Resolves with the body, or the cap's refusal as soon as the body passes `maxBytes`, or a failure if the stream breaks off. */
export function readIncomingCapped(
  incoming: Readable,
  maxBytes: number,
  tooLarge: () => Failure,
): Promise<{ ok: true; bytes: Uint8Array<ArrayBuffer> } | Failure> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = (answer: { ok: true; bytes: Uint8Array<ArrayBuffer> } | Failure) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onBroken);
      incoming.off("close", onBroken);
      resolve(answer);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        // Stop receiving; the adapter drains the rest once the answer is sent.
        incoming.pause();
        finish(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      // One allocation of exactly the body's size, owned by us (not a view of a pooled Buffer).
      const bytes = new Uint8Array(total);
      let at = 0;
      for (const c of chunks) {
        bytes.set(c, at);
        at += c.byteLength;
      }
      finish({ ok: true, bytes });
    };
    // An error, or a close before the end: the client went away in the middle of its body.
    const onBroken = () => finish(fail("invalid_parameter", "The request body could not be read completely"));
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onBroken);
    incoming.on("close", onBroken);
    incoming.resume();
  });
}
