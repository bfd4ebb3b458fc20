// Per-class bookkeeping for the real-model load run: for live and test
// callers apart, what was admitted and refused, the latency of the admitted calls, and
// how honest Retry-After was: for every call that was refused before it got in, the
// Retry-After of its first refusal against the time it actually took to be admitted
// (from that refusal to the sending of the attempt that was admitted).
import type { Outcome } from "../support/removebg-request.ts";
import { tally } from "../support/removebg-request.ts";

export type LoadClass = "live" | "test";

export interface ClassStats {
  outcomes: Outcome[];
  /** Milliseconds from sending to the 200 of admitted attempts. */
  latencies: number[];
  /** Calls refused at least once and then admitted: first Retry-After (s) and the real wait (ms). */
  waits: { retryAfterS: number; waitedMs: number; refusals: number }[];
}

export const newClassStats = (): ClassStats => ({ outcomes: [], latencies: [], waits: [] });

/** One caller's running call: its first refusal, until an attempt is admitted. */
export class CallTracker {
  private firstRefusalAt?: number;
  private firstRetryAfterS?: number;
  private refusals = 0;
  constructor(private readonly stats: ClassStats) {}

  /** Records an answer to an attempt sent at `sentAt` (ms, performance.now()). */
  answer(out: Outcome, sentAt: number, answeredAt: number): void {
    this.stats.outcomes.push(out);
    if (out.status === 200) {
      this.stats.latencies.push(answeredAt - sentAt);
      if (this.firstRefusalAt !== undefined && this.firstRetryAfterS !== undefined) {
        this.stats.waits.push({ retryAfterS: this.firstRetryAfterS, waitedMs: sentAt - this.firstRefusalAt, refusals: this.refusals });
      }
      this.reset();
      return;
    }
    if ((out.status === 429 || out.status === 503) && out.retryAfter !== undefined) {
      if (this.firstRefusalAt === undefined) {
        this.firstRefusalAt = answeredAt;
        this.firstRetryAfterS = Number(out.retryAfter);
      }
      this.refusals++;
      return;
    }
    this.reset(); // any other answer ends the call
  }

  private reset(): void {
    this.firstRefusalAt = undefined;
    this.firstRetryAfterS = undefined;
    this.refusals = 0;
  }
}

const pct = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN;
};
const sec = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "–");

export interface ClassRow {
  cls: LoadClass;
  admitted: number;
  refused: number;
  refusedBy: string;
  p50: string;
  p99: string;
  retryAfter: string;
  waited: string;
  firstRetryAdmitted: string;
}

export function classRow(cls: LoadClass, s: ClassStats): ClassRow {
  const t = tally(s.outcomes);
  const refusedEntries = Object.entries(t).filter(([k]) => k.startsWith("429") || k.startsWith("503"));
  const ra = s.waits.map((w) => w.retryAfterS * 1000);
  const waited = s.waits.map((w) => w.waitedMs);
  const firstTry = s.waits.filter((w) => w.refusals === 1).length;
  return {
    cls,
    admitted: t["200"] ?? 0,
    refused: refusedEntries.reduce((a, [, v]) => a + v, 0),
    refusedBy: refusedEntries.map(([k, v]) => `${k}: ${v}`).join(", ") || "–",
    p50: sec(pct(s.latencies, 0.5)),
    p99: sec(pct(s.latencies, 0.99)),
    retryAfter: s.waits.length ? `${sec(pct(ra, 0.5))} / ${sec(pct(ra, 0.9))}` : "–",
    waited: s.waits.length ? `${sec(pct(waited, 0.5))} / ${sec(pct(waited, 0.9))}` : "–",
    firstRetryAdmitted: s.waits.length ? `${firstTry} of ${s.waits.length}` : "–",
  };
}

export function formatClassTable(rows: ClassRow[]): string {
  const head = [
    "| class | admitted (200) | refused | refused by code | latency p50 / p99 | first Retry-After p50 / p90 | actual wait to admission p50 / p90 | admitted on the first retry |",
    "|---|---|---|---|---|---|---|---|",
  ];
  return [
    ...head,
    ...rows.map((r) => `| ${r.cls} | ${r.admitted} | ${r.refused} | ${r.refusedBy} | ${r.p50} / ${r.p99} | ${r.retryAfter} | ${r.waited} | ${r.firstRetryAdmitted} |`),
  ].join("\n");
}
