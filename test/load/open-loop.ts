// An open-loop load generator: requests leave on a fixed schedule (request k at
// t0 + k / rate), whatever the server's answers are doing, and each latency is counted
// from the request's SCHEDULED send time. A slow answer therefore costs every request
// that had to wait behind it, as it would for real callers arriving at that rate.
//
// Why not autocannon's `overallRate` / `connectionRate` (read in autocannon 9.0.0,
// lib/httpClient.js and lib/run.js):
// - The rate is a per-connection budget per one-second window, not a pace: each
//   connection sends back to back (one request in flight) until it has sent its
//   share of the second, then waits for a setInterval(1000) created when the
//   connection was, so every connection starts its burst at the same moment. At
//   600/s over 128 connections that is ~128 requests at once at each second's start
//   and nothing for the rest of it: a burst, not a fixed offered rate.
// - Latency runs from the moment a request is actually written (hrtime taken when it
//   is queued on the socket), so time a request spent waiting for its slot is not
//   seen: coordinated omission.
// - Its "correction" for that records each latency with an expected interval of
//   Math.ceil(1 / rate) where rate is requests per second per connection and the
//   latency is in milliseconds; for any rate above 1/s that interval is 1 ms, so
//   every answer of L ms also records L−1, L−2, … 1 ms, dragging p50 towards half of
//   the real latency. With ignoreCoordinatedOmission the numbers are plain, but the
//   burst and the omission remain.
//
// Here: `connections` keep-alive sockets, each bound to one scenario connection (its
// own key, as autocannon's connections are, so no org exceeds its cap); a due request
// takes a free socket or waits (FIFO) for one, and that wait counts in its latency.
//
// Why raw sockets (node:net) and not node:http: the generator shares the machine's two
// cores with the gateway it measures, and every microsecond it spends is taken from
// the system being measured. node:http's client (a ClientRequest, an IncomingMessage
// and its stream, header objects, the Agent's bookkeeping) cost 275 µs of CPU per
// request at 600/s over 128 connections against the stand-in product alone; this
// version cost 143 µs in the same check (user + system time, the 1 ms ticker's wake-ups
// included; what the rest is made of was not broken down). Here each slot's request
// bytes are built once (per-request headers, when a scenario has them, are spliced
// into the head), a request leaves in one write, and answers are read by a minimal
// parser (http1-response.ts) that finds where each ends and keeps no body.
// What counts is unchanged: a request is answered when the last byte of its response
// arrives; a transport error, a malformed response or a closed connection before the
// answer is an error; `timeoutMs` without any byte moving on the socket while the
// request is out is a timeout (node:http's `timeout` option is the same socket idle
// timer). After an error or a timeout the slot's socket is destroyed, and the slot's
// next request opens a fresh one, as the Agent did.
//
// Sockets are opened up front, before t0, so connecting does not count in the first
// requests' latencies (those are in the warm-up anyway when there is one); a socket
// the server closed (or one closed after an error) is re-opened by the slot's next
// request, whose latency then includes the connect, as it did with the Agent.
import { connect, type Socket } from "node:net";
import { Http1ResponseParser } from "./http1-response.ts";
import { requestBytes, type RequestHead } from "./http1-request-bytes.ts";

export interface OpenLoopOptions {
  url: string;
  /** Offered requests per second. */
  rate: number;
  seconds: number;
  connections: number;
  connection(i: number): { headers: Record<string, string>; body: Uint8Array };
  perRequest?: (n: number) => Record<string, string>;
  timeoutMs: number;
  /**
   * Seconds of the same schedule on the same sockets before the measured `seconds`: sent
   * and answered, but left out of the latencies, the statuses and the rate (the
   * per-second p99 still shows them). What it spares the figures: the first requests on
   * each new socket and the server's first seconds at this rate.
   */
  warmupSeconds?: number;
}

export interface OpenLoopResult {
  /** Requests offered (scheduled) and answered. */
  sent: number;
  /**
   * Seconds of offering (requests / rate). Answers per second are counted over it: when
   * the server falls behind, every answer still comes, later, and the lateness shows
   * in the latency (counted from the schedule) rather than in the rate.
   */
  duration: number;
  /** Milliseconds from each request's scheduled send time to its answer (answered requests). */
  latency: { p50: number; p99: number };
  /** Milliseconds the actual send trailed the schedule (a socket was busy, or this process was late), p99. */
  sendLagP99: number;
  /** p99 latency of the requests scheduled in each second of the run, warm-up first: when a backlog formed, and whether it drained. */
  p99BySecond: number[];
  /** Seconds at the start of p99BySecond that were warm-up. */
  warmupSeconds: number;
  byStatus: Record<string, number>;
  errors: number;
  timeouts: number;
}

interface Connection {
  socket: Socket;
  parser: Http1ResponseParser;
  /** Replaced (destroyed, or closed by the server): its events are ignored. */
  dead: boolean;
}

interface Slot {
  head: RequestHead;
  conn: Connection | undefined;
  /** The request in flight and its scheduled time; -1 when the slot is free. */
  k: number;
  due: number;
}

const percentile = (sorted: Float64Array, p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : NaN);

export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(o.url);
  if (target.protocol !== "http:") throw new Error(`open loop: only http URLs (${o.url})`);
  const address = { host: target.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(target.port || 80) };
  const warmupSeconds = o.warmupSeconds ?? 0;
  // Requests before `counted` are the warm-up's.
  const counted = Math.ceil(o.rate * warmupSeconds);
  const total = counted + Math.ceil(o.rate * o.seconds);
  const intervalMs = 1000 / o.rate;
  const free: Slot[] = Array.from({ length: o.connections }, (_, i) => {
    const c = o.connection(i);
    return { head: requestBytes(target.host, target.pathname + target.search, c.headers, c.body), conn: undefined, k: -1, due: 0 };
  });
  const slots = [...free];
  const waiting: number[] = []; // request numbers due but without a free socket
  const latencies = new Float64Array(total);
  // By request number (latencies above are in answer order), for the per-second view.
  const latencyOf = new Float64Array(total).fill(NaN);
  const lags = new Float64Array(total);
  const byStatus: Record<string, number> = {};
  let answered = 0;
  let errors = 0;
  let timeouts = 0;
  let scheduled = 0;
  let finished = 0;
  let settled: (r: OpenLoopResult) => void = () => {};
  let ticker: ReturnType<typeof setInterval> | undefined;

  const drop = (slot: Slot, conn: Connection) => {
    conn.dead = true;
    if (slot.conn === conn) slot.conn = undefined;
    conn.socket.destroy();
  };
  // The slot's request is over: answered with `status`, or failed.
  const end = (slot: Slot, status: number | "timeout" | "error") => {
    const k = slot.k;
    slot.k = -1;
    const measured = k >= counted;
    if (typeof status === "number") {
      latencyOf[k] = performance.now() - slot.due;
      if (measured) {
        latencies[answered++] = latencyOf[k];
        byStatus[status] = (byStatus[status] ?? 0) + 1;
      }
    } else {
      if (measured) errors++;
      if (measured && status === "timeout") timeouts++;
    }
    settle(slot);
  };
  const open = (slot: Slot): Connection => {
    const socket = connect(address);
    socket.setNoDelay(true);
    // Node's idle timer on the socket: it fires after `timeoutMs` with no byte read or
    // written, and is only acted on while a request is out.
    socket.setTimeout(o.timeoutMs);
    const conn: Connection = {
      socket,
      dead: false,
      parser: new Http1ResponseParser((status, keepAlive) => {
        if (conn.dead) return;
        // Not kept alive: the slot's next request goes on a fresh socket.
        if (!keepAlive) drop(slot, conn);
        // An answer with no request out: the server is confused; start afresh.
        if (slot.k < 0) drop(slot, conn);
        else end(slot, status);
      }),
    };
    socket.on("data", (d: Buffer) => {
      if (conn.dead) return;
      if (conn.parser.push(d) !== undefined && !conn.dead) {
        drop(slot, conn);
        if (slot.k >= 0) end(slot, "error");
      }
    });
    socket.on("timeout", () => {
      if (conn.dead || slot.k < 0) return;
      drop(slot, conn);
      end(slot, "timeout");
    });
    socket.on("error", () => {}); // "close" follows
    socket.on("close", () => {
      if (conn.dead) return;
      conn.dead = true;
      slot.conn = undefined;
      if (slot.k < 0) return;
      // A response whose body runs to the close is complete now; anything else is cut short.
      const status = conn.parser.finish();
      end(slot, status >= 0 ? status : "error");
    });
    slot.conn = conn;
    return conn;
  };
  const done = () => {
    clearInterval(ticker);
    for (const s of slots) if (s.conn) drop(s, s.conn);
    const lat = latencies.slice(0, answered).sort();
    const lag = lags.slice(counted, scheduled).sort();
    settled({
      sent: total - counted,
      duration: (total - counted) / o.rate,
      latency: { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99) },
      sendLagP99: percentile(lag, 0.99),
      p99BySecond: Array.from({ length: Math.ceil(warmupSeconds + o.seconds) }, (_, sec) => {
        const inSecond = latencyOf.slice(Math.floor(sec * o.rate), Math.floor((sec + 1) * o.rate)).filter((v) => !Number.isNaN(v));
        return percentile(inSecond.sort(), 0.99);
      }),
      warmupSeconds,
      byStatus,
      errors,
      timeouts,
    });
  };
  const settle = (slot: Slot) => {
    finished++;
    const next = waiting.shift();
    if (next !== undefined) send(next, slot);
    else free.push(slot);
    if (finished === total) done();
  };
  const send = (k: number, slot: Slot) => {
    const due = t0 + k * intervalMs;
    lags[k] = performance.now() - due;
    slot.k = k;
    slot.due = due;
    const conn = slot.conn ?? open(slot);
    // One buffer, one write: head and body leave in one syscall.
    conn.socket.write(o.perRequest ? slot.head.with(o.perRequest(k)) : slot.head.bytes);
  };

  // Every slot's socket, connected (or failed) before the schedule starts.
  await Promise.all(
    slots.map(
      (slot) =>
        new Promise<void>((resolve) => {
          const { socket } = open(slot);
          socket.once("connect", resolve);
          socket.once("close", () => resolve());
        }),
    ),
  );
  const t0 = performance.now() + 5; // a little head room for the first timer tick
  return new Promise((resolve) => {
    settled = resolve;
    if (total === 0) return done();
    // Every tick sends whatever has fallen due since the last one, so timer jitter
    // shifts a send by at most a tick and never changes the offered rate.
    ticker = setInterval(() => {
      const due = Math.min(total, Math.floor((performance.now() - t0) / intervalMs) + 1);
      for (; scheduled < due; scheduled++) {
        // The longest-idle socket: requests go round every connection (every org).
        const slot = free.shift();
        if (slot) send(scheduled, slot);
        else waiting.push(scheduled);
      }
      if (scheduled === total) clearInterval(ticker);
    }, 1);
  });
}
