// A small HTTP server the client tests put in front of the real service. It counts the
// requests that reach it (the server-side count the retry tests assert on) and answers
// each one by a script: pass it on to the service, drop the connection, never answer,
// or reply with a given status, error code and headers.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Step =
  | "forward"
  /** Passes it on (the service charges), then drops the connection after the answer's headers. */
  | "forward-cut"
  | "drop"
  | "hang"
  | { status: number; code?: string; body?: string; headers?: Record<string, string> };

export interface Front {
  url: string;
  /** Requests received since the last script(). */
  readonly count: number;
  /** The Idempotency-Key of each of those requests (null when absent). */
  readonly idempotencyKeys: (string | null)[];
  /** Answers the next requests with these steps in turn; the last one repeats. */
  script(...steps: Step[]): void;
  close(): Promise<void>;
}

export async function startFront(target: string): Promise<Front> {
  let steps: Step[] = ["forward"];
  let count = 0;
  let idempotencyKeys: (string | null)[] = [];
  const hung: ServerResponse[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const step = steps[Math.min(count, steps.length - 1)]!;
    count++;
    const idem = req.headers["idempotency-key"];
    idempotencyKeys.push(typeof idem === "string" ? idem : null);
    if (step === "drop") return void req.socket.destroy();
    if (step === "hang") return void hung.push(res);
    if (step === "forward" || step === "forward-cut") {
      const headers: Record<string, string> = {};
      for (const name of ["content-type", "x-api-key", "idempotency-key"]) {
        const v = req.headers[name];
        if (typeof v === "string") headers[name] = v;
      }
      const up = await fetch(`${target}${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) });
      const body = Buffer.from(await up.arrayBuffer());
      const back: Record<string, string> = {};
      up.headers.forEach((v, k) => {
        if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection" && k !== "keep-alive") back[k] = v;
      });
      res.writeHead(up.status, back);
      if (step === "forward-cut") {
        res.flushHeaders();
        return void setTimeout(() => req.socket.destroy(), 20);
      }
      return void res.end(body);
    }
    const body = step.body ?? (step.code ? JSON.stringify({ errors: [{ title: `scripted ${step.code}`, code: step.code }] }) : "");
    res.writeHead(step.status, {
      "content-type": step.body === undefined ? "application/json" : "text/plain",
      "x-pd-request-id": `req_front_${count}`,
      ...step.headers,
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get count() {
      return count;
    },
    get idempotencyKeys() {
      return idempotencyKeys;
    },
    script(...s) {
      steps = s;
      count = 0;
      idempotencyKeys = [];
    },
    async close() {
      for (const r of hung.splice(0)) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback address where nothing listens: connections are refused. */
export async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
