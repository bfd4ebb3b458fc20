// Runs a planned batch through a remover: `concurrency` files at a time (remote mode;
// local mode runs one), skipping files whose output already exists when asked (to
// resume a large batch), and collecting every failure with its reason for the summary.
import { readFile, stat, writeFile } from "node:fs/promises";
import type { PlannedOutput } from "./output-names.ts";
import type { Remover } from "./remover.ts";

export interface BatchOptions {
  concurrency: number;
  skipExisting: boolean;
  /** Told of each file as it starts, and with "done" at the end. */
  onProgress?: (finished: number, label: string) => void;
}

export interface BatchReport {
  written: number;
  skipped: string[];
  /** `<file>: <reason>`; in remote mode the reason names the code and the request ID. */
  failures: string[];
}

export async function runBatch(items: PlannedOutput[], remover: Remover, o: BatchOptions): Promise<BatchReport> {
  const report: BatchReport = { written: 0, skipped: [], failures: [] };
  const failed = new Map<number, string>();
  let next = 0;
  let finished = 0;
  // Set by an answer that every later file would get too (a refused key).
  let stopped: string | undefined;

  async function one(i: number): Promise<void> {
    const { file, out } = items[i]!;
    if (o.skipExisting && (await stat(out).catch(() => undefined))?.isFile()) {
      report.skipped.push(file);
      return;
    }
    if (stopped) {
      failed.set(i, `${file}: not sent (${stopped})`);
      return;
    }
    try {
      const result = await remover.remove(new Uint8Array(await readFile(file)));
      if (result.ok) {
        await writeFile(out, result.png);
        report.written++;
      } else {
        failed.set(i, `${file}: ${result.message}`);
        if (result.stop) stopped ??= result.message.split(":")[0];
      }
    } catch (err) {
      failed.set(i, `${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async function worker(): Promise<void> {
    while (next < items.length) {
      const i = next++;
      o.onProgress?.(finished, items[i]!.file);
      await one(i);
      finished++;
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, items.length)) }, worker));
  o.onProgress?.(items.length, "done");
  // In input order, whatever order the answers came in.
  report.failures = [...failed.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
  return report;
}
