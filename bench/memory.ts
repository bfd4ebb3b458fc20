// npm run bench:memory [-- [--gc] [--size preview|full] models...]: where a worker's memory goes after one 12 MP call,
// in the service's configuration (one pool worker, a thread per core). Each model runs in
// a fresh, nice'd process with bench/memory-hook.mjs preloaded into every thread; the
// table shows process RSS and, per thread, the JS heap, external memory and each
// WebAssembly memory (its size now; wasm memories never shrink, so now is also the peak).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchInputs } from "./inputs.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";

const args = process.argv.slice(2);
// --gc: a full collection in every thread before each snapshot (what is held, not garbage).
const gc = args.includes("--gc");
const sizeAt = args.indexOf("--size");
const size = sizeAt >= 0 ? args.splice(sizeAt, 2)[1]! : "full";
const named = args.filter((a) => !a.startsWith("--"));
const models = named.length ? named : [DEFAULT_MODEL, "small", "int8", "medium"];
const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

const work = mkdtempSync(join(tmpdir(), "pixeldrop-memory-"));
const [big] = await benchInputs();
const inputPath = join(work, "input.jpg");
writeFileSync(inputPath, big!.bytes);
console.log(`bench:memory  ${new Date().toISOString()}  ${cpus().length} cores (${cpus()[0]?.model})  node ${process.version}  input ${big!.width}x${big!.height} JPEG, ${size} tier${gc ? "  (--gc: collected before each snapshot)" : ""}`);

for (const model of models) {
  const dir = join(work, model);
  rmSync(dir, { recursive: true, force: true });
  spawnSync("mkdir", ["-p", dir]);
  const out = join(dir, "result.json");
  const child = spawnSync(
    "nice",
    ["-n", "10", process.execPath, ...(gc ? ["--expose-gc"] : []), "--import", "tsx", "--import", here("./memory-hook.mjs"), here("./memory-child.ts"), model, inputPath, out, size],
    { env: { ...process.env, MEMORY_BENCH_DIR: dir, MEMORY_BENCH_GC: gc ? "1" : "0" }, stdio: ["ignore", "inherit", "inherit"] },
  );
  if (child.status !== 0) {
    console.log(`${model}: child failed (status ${child.status})`);
    continue;
  }
  const r = JSON.parse(readFileSync(out, "utf8"));
  console.log(`\n## ${model}: RSS before ${mib(r.rssBefore)}, after createRemover ${mib(r.rssCreated)}, after one remove ${mib(r.rssAfter)}, sampled peak ${mib(r.peakRss)}, high-water mark ${mib(r.maxRss)}; create ${(r.createMs / 1000).toFixed(1)} s, remove ${(r.removeMs / 1000).toFixed(1)} s`);
  console.log("| thread | JS heap used (peak) | external (peak) | arrayBuffers | wasm memories |");
  console.log("|---|---|---|---|---|");
  const threads = readdirSync(dir)
    .filter((f) => f.startsWith("thread-"))
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")))
    .sort((a, b) => a.threadId - b.threadId);
  const sharedSeen = new Set<string>();
  let wasmTotal = 0;
  for (const t of threads) {
    const wasm = t.wasm.map((w: { name: string; bytes: number; shared: boolean }) => {
      // A shared memory (ORT's threads) shows in every thread that holds it: count it once.
      const key = `${w.name}:${w.bytes}`;
      if (!w.shared || !sharedSeen.has(key)) wasmTotal += w.bytes;
      if (w.shared) sharedSeen.add(key);
      return `${w.name}${w.shared ? " (shared)" : ""} ${mib(w.bytes)}`;
    });
    console.log(`| ${t.main ? "main" : `worker ${t.threadId}`} | ${mib(t.heapUsed)} (${mib(t.peakHeap)}) | ${mib(t.external)} (${mib(t.peakExternal)}) | ${mib(t.arrayBuffers)} | ${wasm.join(", ") || "none"} |`);
  }
  console.log(`wasm memories in all threads: ${mib(wasmTotal)}`);
}
rmSync(work, { recursive: true, force: true });
