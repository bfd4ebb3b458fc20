// The summary table every load entry point prints: one row per scenario, the numbers
// against the targets, and the machine's state, so a pasted run explains itself.
import type { ScenarioResult } from "./run-scenario.ts";

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
const f1 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? "–" : n.toFixed(1));

function answers(r: ScenarioResult): string {
  return Object.entries(r.answers)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ");
}

function target(r: ScenarioResult): string {
  const t = [`≥ ${f0(r.target.reqPerSec)}/s`];
  if (r.target.p99Ms !== undefined) t.push(`p99 < ${r.target.p99Ms} ms`);
  if (r.target.addedP99Ms !== undefined) t.push(`added p99 < ${r.target.addedP99Ms} ms`);
  return t.join(", ");
}

function vsBaseline(r: ScenarioResult): string {
  const b = r.baseline;
  if (!b) return "–";
  const rate = `${(r.reqPerSec / b.reqPerSec).toFixed(2)} × ${b.name} ${f0(b.reqPerSec)}/s`;
  // At a fixed offered rate both answer the same number a second; the baseline's latency is the comparison.
  return b.p99 === undefined ? rate : `${rate}, its p50/p99 ${f1(b.p50)}/${f1(b.p99)} ms`;
}

export function formatTable(results: readonly ScenarioResult[]): string {
  const head = ["scenario", "req/s", "vs baseline (same run)", "p50 ms", "p99 ms", "added p99", "answers (server access log)", "cpu srv/gen/stores", "target", "met?"];
  const rows = results.map((r) => [
    r.name,
    f0(r.reqPerSec),
    vsBaseline(r),
    f1(r.p50),
    f1(r.p99),
    f1(r.addedP99),
    answers(r) + (r.client.errors || r.client.timeouts ? ` (client errors ${r.client.errors}, timeouts ${r.client.timeouts})` : ""),
    `${r.cpu.server.toFixed(2)}/${r.cpu.generator.toFixed(2)}/${r.cpu.stores === undefined ? "–" : r.cpu.stores.toFixed(2)}`,
    target(r),
    r.unexpected.length ? `NO: unexpected ${r.unexpected.join(", ")}` : r.met ? "yes" : "no",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

export const TABLE_NOTES = [
  "req/s: answers the generator received per second. p50/p99: latency over all answers of the run.",
  "closed loop: autocannon, each connection sending its next request as soon as answered (the capacity; at 128",
  "connections on 2 cores its p99 is mostly queueing). open loop at N/s: requests offered on a fixed schedule at the",
  "target's rate (test/load/open-loop.ts), latency counted from each request's scheduled send, req/s = answers over the",
  "seconds of offering, after a warm-up of the same schedule on the same sockets that is not counted (its seconds are",
  "shown under the table); the added p99 target is judged on this row.",
  "vs baseline: req/s over the same load against a baseline measured in this run: a bare Hono app answering the same 401",
  "(bench/refusals-bare.ts) for refusals, the stand-in product called directly for the paid path.",
  "added p99 = p99 − the stub model's fixed delay. answers: the server's access log lines of the run (unattributable",
  "refusals write no request-log row).",
  "cpu srv/gen/stores: CPU seconds per wall second of the server process, of this generator process, and of the run's",
  "Postgres backends + Redis (test/load/store-cpu.ts) (1.00 = one core); all share the machine's cores.",
].join("\n");

/** For open-loop rows: how late sends left, and the p99 of each second's requests (a backlog shows as a run of high seconds). */
export function formatOpenLoopNotes(results: readonly ScenarioResult[]): string {
  return results
    .filter((r) => r.offered)
    .map((r) => {
      const { sendLagP99, p99BySecond, warmupSeconds } = r.offered!;
      const warm = p99BySecond.slice(0, warmupSeconds).map((v) => f0(v)).join(" ");
      const rest = p99BySecond.slice(warmupSeconds).map((v) => f0(v)).join(" ");
      const bySecond = warmupSeconds > 0 ? `warm-up (not counted) ${warm} | counted ${rest}` : rest;
      return `${r.name}: sends left p99 ${f1(sendLagP99)} ms after their schedule; p99 by second (ms): ${bySecond}`;
    })
    .join("\n");
}
