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
import { Agent, request } from "node:http";

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

interface Slot {
  agent: Agent;
  headers: Record<string, string>;
  body: Uint8Array;
}

const percentile = (sorted: Float64Array, p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : NaN);

export function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(o.url);
  const warmupSeconds = o.warmupSeconds ?? 0;
  // Requests before `counted` are the warm-up's.
  const counted = Math.ceil(o.rate * warmupSeconds);
  const total = counted + Math.ceil(o.rate * o.seconds);
  const intervalMs = 1000 / o.rate;
  const free: Slot[] = Array.from({ length: o.connections }, (_, i) => {
    const c = o.connection(i);
    return { agent: new Agent({ keepAlive: true, maxSockets: 1 }), headers: c.headers, body: c.body };
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
  const t0 = performance.now() + 5; // a little head room for the first timer tick

  return new Promise((resolve) => {
    const done = () => {
      clearInterval(ticker);
      for (const s of slots) s.agent.destroy();
      const lat = latencies.slice(0, answered).sort();
      const lag = lags.slice(counted, scheduled).sort();
      resolve({
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
      const headers = o.perRequest ? { ...slot.headers, ...o.perRequest(k) } : slot.headers;
      let over = false;
      const end = (status: number | "timeout" | "error") => {
        if (over) return;
        over = true;
        const measured = k >= counted;
        if (typeof status === "number") {
          latencyOf[k] = performance.now() - due;
          if (measured) {
            latencies[answered++] = latencyOf[k];
            byStatus[status] = (byStatus[status] ?? 0) + 1;
          }
        } else {
          if (measured) errors++;
          if (measured && status === "timeout") timeouts++;
          req.destroy();
        }
        settle(slot);
      };
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: "POST",
          agent: slot.agent,
          headers: { ...headers, "content-length": String(slot.body.length) },
          timeout: o.timeoutMs,
        },
        (res) => {
          res.on("end", () => end(res.statusCode ?? 0));
          res.on("error", () => end("error"));
          res.resume();
        },
      );
      req.on("timeout", () => end("timeout"));
      req.on("error", () => end("error"));
      req.end(slot.body);
    };
    // Every tick sends whatever has fallen due since the last one, so timer jitter
    // shifts a send by at most a tick and never changes the offered rate.
    const ticker = setInterval(() => {
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
