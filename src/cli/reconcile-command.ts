// `pixeldrop reconcile --from <day> --to <day> [--json] [--base-url <url>]`: the
// operator's reconciliation (GET /admin/v1/reconciliation) of a running service, as a
// table or its JSON. The operator token is read from PD_OPERATOR_TOKEN (or
// OPERATOR_TOKEN), never from the command line, where other users of the machine can
// read it. Exit 0: no differences; 1: differences (listed); 2: a usage error, or the
// service refused or did not answer (as diff(1) does).
import { parseArgs } from "node:util";
import type { Env } from "./args.ts";
import { DEFAULT_BASE_URL } from "./args.ts";

export const RECONCILE_USAGE = `usage: pixeldrop reconcile --from <day or date-time> --to <day or date-time> [--json] [--base-url <url>]

Compares the payment provider's payments, refunds and disputes with the ledger of the
service at --base-url (or PD_BASE_URL, default ${DEFAULT_BASE_URL}), per organization.
The operator token comes from PD_OPERATOR_TOKEN (or OPERATOR_TOKEN). from is included,
to excluded (2025-05-01 is 00:00 UTC; or 2025-05-01T00:00:00+09:00), at most 31 days.
Exit 0: no differences; 1: differences; 2: a usage error or no answer.`;

/** The service answers in well under this; a provider with thousands of records a range takes longer. */
const TIMEOUT_MS = 120_000;

interface Difference {
  kind: string;
  orgId: string | null;
  providerRef: string | null;
  ledgerRef: string | null;
  providerKrw: number;
  ledgerKrw: number;
  reason: string;
}
interface Totals {
  paymentsKrw: number;
  refundsKrw: number;
  disputesKrw: number;
}
interface Report {
  from: string;
  to: string;
  provider: string;
  organizations: { orgId: string; provider: Totals; ledger: Totals; differences: Difference[] }[];
  unmatched: Difference[];
  differenceCount: number;
}

export async function reconcileCommand(
  argv: string[],
  out: (s: string) => void,
  log: (s: string) => void,
  env: Env,
  fetchFn: typeof fetch = fetch,
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { from: { type: "string" }, to: { type: "string" }, json: { type: "boolean" }, "base-url": { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (err) {
    return usage(log, err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    out(RECONCILE_USAGE);
    return 0;
  }
  if (!values.from || !values.to) return usage(log, "--from and --to are required");
  const token = env.PD_OPERATOR_TOKEN || env.OPERATOR_TOKEN;
  if (!token) return usage(log, "set PD_OPERATOR_TOKEN (or OPERATOR_TOKEN) to the service's operator token");
  const base = (values["base-url"] ?? env.PD_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(base) || !URL.canParse(base)) return usage(log, "--base-url must be an http:// or https:// URL");

  const url = `${base}/admin/v1/reconciliation?${new URLSearchParams({ from: values.from, to: values.to })}`;
  let res: Response;
  let body: unknown;
  try {
    res = await fetchFn(url, { headers: { authorization: `Bearer ${token}`, accept: "application/json" }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    body = await res.json();
  } catch (err) {
    log(`pixeldrop: ${base} did not answer: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  }
  if (res.status !== 200) {
    const e = (body as { errors?: { code?: string; title?: string }[] } | null)?.errors?.[0];
    log(`pixeldrop: ${res.status} ${e?.code ?? ""}: ${e?.title ?? "the service refused"}`);
    return 2;
  }
  const report = body as Report;
  if (values.json) out(JSON.stringify(report, null, 2));
  else for (const line of reportLines(report)) out(line);
  return report.differenceCount === 0 ? 0 : 1;
}

function usage(log: (s: string) => void, message: string): number {
  log(`pixeldrop: ${message}`);
  log(RECONCILE_USAGE);
  return 2;
}

const won = (n: number) => n.toLocaleString("en-US");

/** The report as a table per organization, then each difference on its own line. */
export function reportLines(r: Report): string[] {
  const lines = [`reconciliation ${r.from} to ${r.to} against ${r.provider}: ${r.differenceCount} difference${r.differenceCount === 1 ? "" : "s"}`];
  const head = ["organization", "payments", "(ledger)", "refunds", "(ledger)", "disputes", "(ledger)", "differences"];
  const rows = r.organizations.map((o) => [
    o.orgId,
    won(o.provider.paymentsKrw),
    won(o.ledger.paymentsKrw),
    won(o.provider.refundsKrw),
    won(o.ledger.refundsKrw),
    won(o.provider.disputesKrw),
    won(o.ledger.disputesKrw),
    String(o.differences.length),
  ]);
  if (rows.length) {
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
    lines.push(line(head), ...rows.map(line));
  }
  const diffs = [...r.organizations.flatMap((o) => o.differences), ...r.unmatched];
  for (const d of diffs) {
    lines.push(`  ${d.kind} ${d.providerRef ?? "-"} / ${d.ledgerRef ?? "-"} (${d.orgId ?? "no organization"}): provider ${won(d.providerKrw)} KRW, ledger ${won(d.ledgerKrw)} KRW: ${d.reason}`);
  }
  return lines;
}
