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
  if (r.target.addedP99Ms !== undefined) t.push(`added p99 < ${r.target.addedP99Ms} ms`);
  return t.join(", ");
}

export function formatTable(results: readonly ScenarioResult[]): string {
  const head = ["scenario", "req/s", "p50 ms", "p99 ms", "added p99", "answers (server log)", "cpu srv/gen", "target", "met?"];
  const rows = results.map((r) => [
    r.name,
    f0(r.reqPerSec),
    f1(r.p50),
    f1(r.p99),
    f1(r.addedP99),
    answers(r) + (r.client.errors || r.client.timeouts ? ` (client errors ${r.client.errors}, timeouts ${r.client.timeouts})` : ""),
    `${r.cpu.server.toFixed(2)}/${r.cpu.generator.toFixed(2)}`,
    target(r),
    r.unexpected.length ? `NO: unexpected ${r.unexpected.join(", ")}` : r.met ? "yes" : "no",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

export const TABLE_NOTES = [
  "req/s: answers the generator received per second. p50/p99: autocannon latency over all answers of the run.",
  "added p99 = p99 − the stub model's fixed delay. answers: what the server logged in request_log for the run.",
  "cpu srv/gen: CPU seconds per wall second of the server process and of this generator process (1.00 = one core);",
  "both share the machine's cores with Postgres and Redis, so the generator's share is taken from the server.",
].join("\n");
