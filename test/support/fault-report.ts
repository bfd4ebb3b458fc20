// The summary every fault suite prints: one row per scenario with what the clients
// saw (requests, 200s, errors by code), what the ledger says afterwards (charged, holds
// still open, balance check) and how long the service took to serve again on its own.
// Rows are also appended to $PD_FAULTS_REPORT when set, so a long run leaves a table
// to paste into docs/RELIABILITY.md.
import { appendFileSync } from "node:fs";
import type { Outcome } from "./removebg-request.ts";

export interface FaultRow {
  scenario: string;
  requests: number;
  ok200: number;
  errors: Record<string, number>;
  chargedKrw: number;
  charges: number;
  holdsOpenAfter: number;
  balanceCheck: "ok" | "FAIL";
  /** Seconds from the fault's end (store back, process restarted) to the first 200; undefined when not measured. */
  recoveredS?: number;
  pass: boolean;
}

export function errorsByCode(outcomes: readonly Outcome[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) {
    if (o.status === 200) continue;
    const label = o.code ? `${o.status} ${o.code}` : String(o.status);
    t[label] = (t[label] ?? 0) + 1;
  }
  return t;
}

const HEAD = "| scenario | requests | 200s | errors by code | charged | holds open after | balance check | recovered in | pass |";

function line(r: FaultRow): string {
  const errs = Object.entries(r.errors)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ");
  const rec = r.recoveredS === undefined ? "–" : `${r.recoveredS.toFixed(1)} s`;
  return `| ${r.scenario} | ${r.requests} | ${r.ok200} | ${errs || "–"} | ${r.charges} (${r.chargedKrw} KRW) | ${r.holdsOpenAfter} | ${r.balanceCheck} | ${rec} | ${r.pass ? "pass" : "FAIL"} |`;
}

/** Collects rows during a suite; print() writes the table once at the end. */
export function faultReport(title: string) {
  const rows: FaultRow[] = [];
  return {
    add(row: FaultRow) {
      rows.push(row);
    },
    print() {
      if (rows.length === 0) return;
      const text = [`\n${title}`, HEAD, "|---|---|---|---|---|---|---|---|---|", ...rows.map(line), ""].join("\n");
      // stderr: the spec reporter passes a test file's stderr through as it comes.
      process.stderr.write(`${text}\n`);
      if (process.env.PD_FAULTS_REPORT) appendFileSync(process.env.PD_FAULTS_REPORT, `${text}\n`);
    },
  };
}
