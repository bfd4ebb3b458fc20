// Counts fuzz outcomes and timings and prints them as a table at the end of a suite, so a
// run (short in CI, long on demand) leaves numbers behind, not only a pass.

/** Cases per fuzz target: CASES in the environment, else the short CI default. */
export function caseCount(short: number): number {
  const raw = process.env.CASES;
  if (raw === undefined || raw === "") return short;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`CASES must be a positive integer, got ${raw}`);
  return n;
}

/** A fixed seed when FUZZ_SEED is set (to replay a run), else fast-check picks one and reports it. */
export function fuzzSeed(): number | undefined {
  const raw = process.env.FUZZ_SEED;
  return raw ? Number(raw) : undefined;
}

export interface Slowest {
  ms: number;
  label: string;
}

export function createTally(title: string) {
  const outcomes = new Map<string, number>();
  const kinds = new Map<string, number>();
  const slowest: Slowest[] = [];
  let cases = 0;
  let totalMs = 0;
  return {
    /** One case: what was sent (`kind`), what came back (`outcome`), how long it took. */
    add(kind: string, outcome: string, ms: number, label: string = kind): void {
      cases++;
      totalMs += ms;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      slowest.push({ ms, label: `${label} → ${outcome}` });
      slowest.sort((a, b) => b.ms - a.ms);
      slowest.length = Math.min(slowest.length, 3);
    },
    get cases() {
      return cases;
    },
    outcomes,
    slowest,
    /** The summary as text: counts by outcome and by input kind, the three slowest cases. */
    render(extra: [string, string][] = []): string {
      const rows: string[] = [`\n## ${title}`, "", `| cases | total s | mean ms |`, `|---:|---:|---:|`];
      rows.push(`| ${cases} | ${(totalMs / 1000).toFixed(1)} | ${(totalMs / Math.max(1, cases)).toFixed(1)} |`, "");
      rows.push("| outcome | cases |", "|---|---:|");
      for (const [k, n] of [...outcomes].sort((a, b) => b[1] - a[1])) rows.push(`| ${k} | ${n} |`);
      rows.push("", "| input kind | cases |", "|---|---:|");
      for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1])) rows.push(`| ${k} | ${n} |`);
      rows.push("", "| slowest cases | ms |", "|---|---:|");
      for (const s of slowest) rows.push(`| ${s.label.replace(/\|/g, "/")} | ${s.ms.toFixed(0)} |`);
      if (extra.length) {
        rows.push("", "| measure | value |", "|---|---|");
        for (const [k, v] of extra) rows.push(`| ${k} | ${v} |`);
      }
      return rows.join("\n");
    },
  };
}

/** Heap and RSS in MB after a full collection (only meaningful under node --expose-gc). */
export async function memoryAfterGc(): Promise<{ heapMb: number; rssMb: number; gc: boolean }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    // Two passes with a turn of the event loop between: finalizers of the first free more.
    gc();
    await new Promise((r) => setImmediate(r));
    gc();
  }
  const m = process.memoryUsage();
  return { heapMb: m.heapUsed / 2 ** 20, rssMb: m.rss / 2 ** 20, gc: gc !== undefined };
}
