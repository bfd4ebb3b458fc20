// Small timing helpers shared by the imaging benchmarks.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { median } from "./median.ts";

export interface Timing {
  /** Median wall-clock time, ms. */
  median: number;
  /** Median CPU time (user + system) of this process, ms: less disturbed by other load on the machine. */
  cpuMedian: number;
  all: number[];
}

/** Runs `fn` `runs` times after one warm-up run; medians of wall and CPU time. */
export async function medianMs(fn: () => unknown, runs = 5): Promise<Timing> {
  await fn();
  const all: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    await fn();
    all.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  return { median: median(all), cpuMedian: median(cpu), all };
}

export function row(label: string, r: Timing): string {
  const wall = r.median.toFixed(0).padStart(6);
  const cpu = r.cpuMedian.toFixed(0).padStart(6);
  return `${label.padEnd(44)} ${wall} ms wall ${cpu} ms cpu   (${r.all.map((v) => v.toFixed(0)).join(", ")})`;
}

/** A temp dir removed on exit. Big inputs are generated here, never committed. */
export function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pixeldrop-bench-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** ImageMagick 6 at /usr/bin/convert (/usr/local/bin/convert may be a stand-in). */
export function convert(args: string[]): void {
  execFileSync("/usr/bin/convert", args, { stdio: "inherit" });
}

export function loadNote(): string {
  const os = process.platform === "linux" ? execFileSync("cat", ["/proc/loadavg"]).toString().trim() : "n/a";
  return `node ${process.version}, load average ${os}`;
}
