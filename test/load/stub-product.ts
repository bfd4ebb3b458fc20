// A stand-in product service for gateway load runs (split deployment, PRODUCT_URL):
// answers every request with a fixed PNG after a fixed delay, like the stub model but
// without the pipeline's per-image CPU work (resizing to the model's 1024 × 1024 input
// and back costs more than 100 ms of CPU per call on this machine, which would cap a
// 2-core box near 10 paid calls a second and measure the imaging, not the gateway).
// Run as its own process: `node --import tsx test/load/stub-product.ts <delayMs>`;
// it prints `{"port":N}` once listening.
//
// Why raw sockets (node:net) and not node:http: this process shares the machine's two
// cores with the gateway it stands behind, and every microsecond it spends is taken
// from the system being measured. With node:http (request and response objects, header
// maps, streams) it cost 192 µs of CPU per request at 600/s with a 50 ms delay, driven
// by the open loop alone; this version cost 142 µs in the same check (user + system
// time, two event-loop wake-ups per request: the read and the delay's timer; what the
// rest is made of was not broken down). Here the answer's bytes are built once (only
// the request id varies), requests are read by a minimal parser (http1-request.ts) that
// skips bodies, and each answer leaves in one write. What it does is what the node:http
// version did: every request's body is read to its end (as the real product does), then
// after `delayMs` it is answered 200 with the PNG, its size headers and the request's
// X-PD-Request-Id echoed; connections are kept alive (closed after 60 s idle, as
// `keepAliveTimeout = 60_000` did); pipelined requests are answered in order; a
// malformed request gets 400 and the connection is closed; SIGTERM stops listening,
// closes idle connections, lets busy ones answer, and exits.
import { createServer, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { Http1RequestParser, type RequestFacts } from "./http1-request.ts";

const delayMs = Number(process.argv[2] ?? "50");
const IDLE_TIMEOUT_MS = 60_000;
const png = readFileSync(new URL("../fixtures/images/orient-upright.png", import.meta.url));
const fields = [
  "content-type: image/png",
  `content-length: ${png.length}`,
  "x-width: 64",
  "x-height: 48",
  `x-processing-ms: ${delayMs}`,
  "x-foreground-top: 0",
  "x-foreground-left: 0",
  "x-foreground-width: 64",
  "x-foreground-height: 48",
];
// The answer in three parts: everything before the request id (one per connection
// outcome), the id, and the end of the head with the PNG.
const before = {
  keepAlive: Buffer.from(["HTTP/1.1 200 OK", ...fields, "connection: keep-alive", `keep-alive: timeout=${IDLE_TIMEOUT_MS / 1000}`, "x-pd-request-id: "].join("\r\n"), "latin1"),
  close: Buffer.from(["HTTP/1.1 200 OK", ...fields, "connection: close", "x-pd-request-id: "].join("\r\n"), "latin1"),
};
const after = Buffer.concat([Buffer.from("\r\n\r\n"), png]);
const BAD_REQUEST = Buffer.from("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
const CONTINUE = Buffer.from("HTTP/1.1 100 Continue\r\n\r\n");

function answer(facts: RequestFacts): Buffer {
  const head = facts.keepAlive ? before.keepAlive : before.close;
  const id = Buffer.byteLength(facts.requestId, "latin1");
  const out = Buffer.allocUnsafe(head.length + id + after.length);
  head.copy(out, 0);
  out.write(facts.requestId, head.length, "latin1");
  after.copy(out, head.length + id);
  return out;
}

/** One answer owed on a connection: its bytes once its delay is over. */
interface Owed {
  bytes: Buffer | undefined;
  /** The connection closes after it. */
  last: boolean;
}

let stopping = false;
const connections = new Set<Connection>();

class Connection {
  private readonly owed: Owed[] = [];
  private ended = false;
  private readonly parser = new Http1RequestParser({
    onContinue: () => this.socket.write(CONTINUE),
    onRequest: (facts) => {
      const o: Owed = { bytes: undefined, last: !facts.keepAlive };
      this.owed.push(o);
      setTimeout(() => {
        o.bytes = answer(facts);
        this.flush();
      }, delayMs);
    },
  });

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.setTimeout(IDLE_TIMEOUT_MS);
    socket.on("data", (d: Buffer) => {
      if (this.ended) return;
      if (this.parser.push(d) !== undefined) {
        // Answered after whatever came before it, then the connection closes.
        this.owed.push({ bytes: BAD_REQUEST, last: true });
        this.flush();
      }
    });
    // Nothing for 60 s and no answer owed: idle, or a request that stopped halfway.
    socket.on("timeout", () => {
      if (this.owed.length === 0) socket.destroy();
    });
    socket.on("error", () => {}); // "close" follows
    socket.on("close", () => {
      this.ended = true; // answers still waiting for their delay are dropped
      connections.delete(this);
    });
    connections.add(this);
  }

  /** No request being read and none waiting for its answer. */
  get idle(): boolean {
    return this.owed.length === 0 && this.parser.idle;
  }

  /** Writes the answers that are ready, in request order (pipelined requests wait for the ones before). */
  private flush(): void {
    if (this.ended) return;
    let ready = 0;
    let last = false;
    while (ready < this.owed.length && this.owed[ready]!.bytes && !last) last = this.owed[ready++]!.last;
    if (ready === 0) return;
    const out = this.owed.splice(0, ready).map((o) => o.bytes!);
    this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
    if (last || (stopping && this.idle)) this.end();
  }

  end(): void {
    this.ended = true;
    this.owed.length = 0;
    this.socket.end();
  }

  /** SIGTERM: an idle connection closes now, a busy one after its answers. */
  stop(): void {
    if (this.idle) this.end();
  }
}

const server = createServer((socket) => new Connection(socket));
server.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  console.log(JSON.stringify({ port: typeof addr === "object" && addr ? addr.port : 0 }));
});
process.on("SIGTERM", () => {
  stopping = true;
  server.close(() => process.exit(0));
  for (const c of connections) c.stop();
});
