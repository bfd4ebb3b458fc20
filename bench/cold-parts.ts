// npm run bench:cold-parts: where a one-image process's time goes, phase by phase, each
// phase timed in a fresh process of its own (medians of --runs, default 3). The phases
// are what a cold CLI call does in order; each row's process does every phase up to it,
// so a phase's cost is its row minus the row before, and the table prints both.
//
//   node        a bare `node -e 0` (process start and exit)
//   import      + import of the built library (dist/index.js)
//   runtime     + onnxruntime-web's WebAssembly runtime started (a 1-node session:
//                 module compile, instantiate, threads)
//   session     + the default model read, hashed and its session created
//   first run   + one inference at the side the rule gives the photo (input-side.ts)
//   second run  + one more, the same: the first run's extra cost is first − second
//   remover     createRemover + remove(photo) + dispose through the library (what the CLI does)
//
//   npm run bench:cold-parts -- [--runs 3] [--photo file] [--threads N]
// Wall time from the parent's spawn to the child's exit; CPU and peak RSS from GNU time. Every
// child but `node` runs under tsx (it reaches engine internals in src/), so the `import`
// row includes the loader's own start.
import { spawnSync } from "node:child_process";
import { availableParallelism, cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { median } from "./median.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const RUNS = Number(arg("runs", "3"));
const PHOTO = arg("photo", "");
const THREADS = arg("threads", String(availableParallelism()));
const PHASES = ["node", "import", "runtime", "session", "first run", "second run", "remover"] as const;

function once(phase: (typeof PHASES)[number]): { wallS: number; cpuS: number; peakMiB: number } {
  const args =
    phase === "node"
      ? ["-e", "0"]
      : ["--import", "tsx", fileURLToPath(new URL("./cold-parts-child.ts", import.meta.url)), phase, THREADS, ...(PHOTO ? [PHOTO] : [])];
  const t0 = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "PDTIME %U %S %M", process.execPath, ...args], { cwd: REPO, encoding: "utf8" });
  const wallS = (performance.now() - t0) / 1000;
  const line = r.stderr.split("\n").find((l) => l.startsWith("PDTIME "));
  if (r.status !== 0 || !line) throw new Error(`${phase} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  const [user, sys, kb] = line.split(" ").slice(1).map(Number) as [number, number, number];
  return { wallS, cpuS: user + sys, peakMiB: kb / 1024 };
}

const rows = new Map<string, { wallS: number[]; cpuS: number[]; peakMiB: number[] }>(PHASES.map((p) => [p, { wallS: [], cpuS: [], peakMiB: [] }]));
const load0 = loadavg()[0]!;
for (let r = 0; r < RUNS; r++) {
  for (const p of PHASES) {
    const s = once(p);
    const row = rows.get(p)!;
    row.wallS.push(s.wallS);
    row.cpuS.push(s.cpuS);
    row.peakMiB.push(s.peakMiB);
  }
}
const simd = /avx512/.test(spawnSync("grep", ["-m1", "flags", "/proc/cpuinfo"], { encoding: "utf8" }).stdout) ? "AVX-512" : "AVX2";
console.log(`\n${cpus()[0]?.model} (${simd}), ${cpus().length} cores, ${THREADS} threads, Node ${process.version}, load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}, ${RUNS} runs\n`);
console.log("| phase (process does everything up to it) | wall (median) | phase's own wall | CPU s | peak RSS MiB |");
console.log("|---|---|---|---|---|");
let before = 0;
for (const p of PHASES) {
  const row = rows.get(p)!;
  const w = median(row.wallS);
  const own = p === "remover" ? "" : (w - before).toFixed(2);
  console.log(`| ${p} | ${w.toFixed(2)} | ${own} | ${median(row.cpuS).toFixed(2)} | ${Math.round(median(row.peakMiB))} |`);
  if (p !== "remover") before = w;
}
