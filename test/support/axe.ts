// axe-core in a page that playwright-core drives: the package's own build is read from
// node_modules and evaluated in the page (nothing is fetched), then run with the WCAG 2.1
// A and AA rules only. Findings come back one per element, with the rule, its impact and
// the element's CSS selector, so a failure says what to fix and where.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** The rule sets run: WCAG 2.0 and 2.1, levels A and AA. */
export const WCAG21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

/** Impacts that fail a test; minor and moderate ones are reported only. */
export const BLOCKING_IMPACTS = ["serious", "critical"];

export const IMPACTS = ["critical", "serious", "moderate", "minor"] as const;

export interface AxeFinding {
  rule: string;
  impact: string;
  /** The element's CSS selector (inside frames, joined by " >>> "). */
  target: string;
  help: string;
}

/** Runs axe over the whole document as it is now (at the current viewport). */
export async function axeFindings(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: any }).axe;
    const result = await axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
    return (result.violations as any[]).flatMap((v) =>
      (v.nodes as any[]).map((n) => ({
        rule: v.id as string,
        impact: (n.impact ?? v.impact ?? "unknown") as string,
        target: (n.target as unknown[]).map(String).join(" >>> "),
        help: v.help as string,
      })),
    );
  }, WCAG21_AA);
}

/** Rules broken, counted by impact (one rule on several elements counts once). */
export function countByImpact(findings: AxeFinding[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(IMPACTS.map((i) => [i, 0]));
  for (const impact of IMPACTS) out[impact] = new Set(findings.filter((f) => f.impact === impact).map((f) => f.rule)).size;
  return out;
}

export const isBlocking = (f: AxeFinding): boolean => BLOCKING_IMPACTS.includes(f.impact);

export const describeFinding = (f: AxeFinding): string => `${f.rule} (${f.impact}) at ${f.target}: ${f.help}`;
