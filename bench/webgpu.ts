// WebGPU against WebAssembly on this machine, in one run. Deno only: Node 20 has no WebGPU.
// Every measurement runs in a fresh Deno process whose exit code and signal are recorded.
//   1. the adapter Deno offers (a software one means no GPU: its rows time a CPU rasteriser);
//   2. bare 1024² inference: the default model on WebAssembly (the CPU host's baseline) and
//      each GPU form on WebGPU, one picture a run and a batch of `--batch` (a picture's share);
//   3. createRemover({ backend }) for auto and wasm (bench/webgpu-child.ts remover): ready,
//      a fresh process's first 12 MP cut-out, when auto has settled on the GPU, then warm 12 MP
//      full and preview and 0.4 MP full calls;
//   4. throughput of the engine auto builds, settled: pictures a second with 1, 4 and 16
//      callers at 12 MP and 1 MP, and how the GPU's runs batched them, for each count of
//      pipeline workers in --gpu-workers ("default": gpuPipelineShape's);
//   5. `--exits` fresh processes that use the GPU engine and end by themselves: their exits.
// Targets (docs/BENCHMARKS.md): 1024² ≤ 80 ms a picture (a batch counts); a fresh process's
// first cut-out no later than WebAssembly's; at 16 callers ≥ 0.7 ÷ (a picture's inference)
// pictures a second; every process exits 0.
//   deno run -A bench/webgpu.ts [--runs 5] [--threads N] [--batch 4] [--callers 1,4,16] [--seconds 8] [--gpu-workers default]
//        [--exits 20] [--exit-parallel 4] [--child-timeout 150] [--skip inference,remover,throughput,exits]
// On a GPU machine with no network: scripts/webgpu-bench-device.sh (docs/MODEL.md).
import { parseArgs } from "node:util";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { locateAssets } from "../src/engine/assets/locate.ts";
import { loadManifest } from "../src/engine/inference/manifest.ts";
import { PACKAGE_MODELS_DIR } from "../src/engine/assets/paths.ts";
import { benchPhoto, jpegAt } from "./inputs.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    threads: { type: "string", default: String(availableParallelism()) },
    batch: { type: "string", default: "4" },
    callers: { type: "string", default: "1,4,16" },
    seconds: { type: "string", default: "8" },
    "gpu-workers": { type: "string", default: "default" },
    exits: { type: "string", default: "20" },
    "exit-parallel": { type: "string", default: "4" },
    "child-timeout": { type: "string", default: "150" },
    skip: { type: "string", default: "" },
  },
});
const threads = values.threads!;
const skip = new Set(values.skip!.split(",").filter(Boolean));

interface Outcome {
  json?: Record<string, unknown>;
  code: number | null;
  signal: string | null;
  ms: number;
  tail: string;
}

/** A fresh Deno process (this one's binary) running `args`: its last JSON line, exit code and signal. */
function child(args: string[]): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["run", "-A", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      // The child times a fresh process's first cut-out from here (Deno's start included).
      env: { ...process.env, PD_BENCH_SPAWNED_AT: String(Date.now()) },
    });
    let out = "";
    let err = "";
    p.stdout!.on("data", (d: Uint8Array) => (out += new TextDecoder().decode(d)));
    p.stderr!.on("data", (d: Uint8Array) => {
      const s = new TextDecoder().decode(d);
      err += s;
      process.stderr.write(s);
    });
    const timer = setTimeout(() => p.kill("SIGKILL"), Number(values["child-timeout"]) * 1000);
    p.on("close", (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      const line = out.trim().split("\n").reverse().find((l) => l.startsWith("{"));
      resolve({ json: line ? JSON.parse(line) : undefined, code, signal, ms: performance.now() - started, tail: (err || out).slice(-300).replaceAll("\n", " ") });
    });
  });
}
const exitOf = (o: Outcome) => `${o.code ?? "–"}${o.signal ? ` ${o.signal}` : ""}`;
const s = (ms: unknown) => (typeof ms === "number" ? (ms / 1000).toFixed(2) : "–");
const failed = (o: Outcome) => `failed (exit ${exitOf(o)}): ${o.tail.replaceAll("|", "/")}`;

type AdapterInfo = { vendor: string; architecture: string; device: string; description: string; isFallbackAdapter?: boolean };
const gpu = (navigator as { gpu?: { requestAdapter(): Promise<{ info: AdapterInfo; features: Set<string> } | null> } }).gpu;
const adapter = await gpu?.requestAdapter();
const info = adapter?.info;
console.log(`adapter: ${info ? `${info.vendor} ${info.architecture} ${info.device} ${info.description}`.trim() : "none"}; software: ${info?.isFallbackAdapter ?? "–"}; shader-f16: ${adapter?.features.has("shader-f16") ?? "–"}`);
console.log(`cores ${availableParallelism()}, wasm threads ${threads}, load ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`);

// Every model made whole first (the GPU forms are derived here from the default's file), so
// the children only read.
const loaded = await loadManifest(join(PACKAGE_MODELS_DIR, "manifest.json"));
if (!loaded.ok) throw new Error(loaded.title);
const gpuForms = Object.entries(loaded.manifest.models).filter(([, e]) => e.gpuFormOf === DEFAULT_MODEL).map(([name]) => name);
for (const model of [DEFAULT_MODEL, ...gpuForms]) await locateAssets({ model });

let inferenceMs: number | undefined; // the best per-picture 1024² time on WebGPU
if (!skip.has("inference")) {
  console.log("\n| model | backend | batch | session start s | first run s | warm run, median s | a picture s | WebAssembly's ÷ this | exit |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  const base = await child(["scripts/deno-inference-time.ts", "wasm", threads, values.runs!, DEFAULT_MODEL]);
  const cpuPicture = base.json?.perPictureMs as number | undefined;
  const row = (o: Outcome, model: string, backend: string, batch: number) => {
    const r = o.json;
    if (!r) return console.log(`| ${model} | ${backend} | ${batch} | ${failed(o)} | | | | | ${exitOf(o)} |`);
    const runs = r.runMs as number[];
    const warm = runs.slice(1).sort((a, b) => a - b)[Math.floor((runs.length - 1) / 2)];
    const pic = r.perPictureMs as number;
    console.log(`| ${model} | ${r.backend} | ${batch} | ${s(r.createMs)} | ${s(runs[0])} | ${s(warm)} | ${s(pic)} | ${cpuPicture && pic ? (cpuPicture / pic).toFixed(1) : "–"} | ${exitOf(o)} |`);
    if (r.backend === "webgpu" && pic) inferenceMs = Math.min(inferenceMs ?? Infinity, pic);
  };
  row(base, DEFAULT_MODEL, "wasm", 1);
  for (const model of gpuForms) {
    for (const batch of [1, Number(values.batch)]) {
      row(await child(["scripts/deno-inference-time.ts", "webgpu", "1", values.runs!, model, String(batch)]), model, "webgpu", batch);
    }
  }
}

// The inputs, made from the fixture photo: 12 MP, 1 MP and 0.4 MP JPEGs (3:2).
const photo = await benchPhoto();
const write = async (w: number, h: number, name: string) => {
  const path = join(tmpdir(), `pixeldrop-webgpu-${name}.jpg`);
  writeFileSync(path, (await jpegAt(photo, w, h, name)).bytes);
  return path;
};
const [big, mid, small] = [await write(4242, 2828, "12mp"), await write(1224, 816, "1mp"), await write(774, 516, "04mp")];

if (!skip.has("remover")) {
  console.log("\ncreateRemover({ backend }), the default model, each in a fresh process: a 12 MP remove() at once, then warm calls once settled:");
  console.log("\n| backend | first cut-out by | createRemover s | first 12 MP remove s | fresh process to first cut-out s | settled (from process start) s | then runs | 12 MP full warm s | 12 MP preview warm s | 0.4 MP full warm s | RSS MiB | exit |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
  const rows: Record<string, Outcome> = {};
  for (const backend of ["auto", "wasm"]) {
    const o = (rows[backend] = await child(["bench/webgpu-child.ts", "remover", backend, threads, big, small, values.runs!]));
    const r = o.json as Record<string, { backend: string; model: string } & Record<string, unknown>> | undefined;
    if (!r) {
      console.log(`| ${backend} | ${failed(o)} | | | | | | | | | | ${exitOf(o)} |`);
      continue;
    }
    console.log(
      `| ${backend} | ${r.first!.model} / ${r.first!.backend} | ${s(r.createMs)} | ${s(r.firstMs)} | ${s(r.processToFirstMs)} | ${s(r.settledMs)} | ${r.after!.model} / ${r.after!.backend} | ${s(r.fullMs)} | ${s(r.previewMs)} | ${s(r.smallFullMs)} | ${r.rssMiB} | ${exitOf(o)} |`,
    );
  }
  const [a, w] = [rows.auto?.json, rows.wasm?.json];
  if (a && w) console.log(`\nfresh process to first 12 MP cut-out: auto ${s(a.processToFirstMs)} s, wasm ${s(w.processToFirstMs)} s (target: auto ≤ wasm); warm 12 MP full: auto ${s(a.fullMs)} s, wasm ${s(w.fullMs)} s`);
}

if (!skip.has("throughput")) {
  for (const shape of values["gpu-workers"]!.split(",").filter(Boolean)) {
    const o = await child(["bench/webgpu-child.ts", "throughput", values.callers!, values.seconds!, shape, big, mid]);
    const r = o.json as { backend: string; model: string; poolSize: number; bandHelpers?: number; maxBatch?: number; gpuFallback?: string; rows: Record<string, number | string>[] } | undefined;
    if (!r) {
      console.log(`\nthroughput (${shape} pipeline workers): ${failed(o)}`);
      continue;
    }
    console.log(
      `\nthroughput, the engine auto builds once settled (${r.model} on ${r.backend}, ${r.poolSize} pipeline workers of ${(r.bandHelpers ?? 0) + 1} threads, batches up to ${r.maxBatch ?? 1}${r.gpuFallback ? `; gave way: ${r.gpuFallback}` : ""}; exit ${exitOf(o)}):`,
    );
    console.log("\n| picture | callers | pictures a second | pictures | GPU runs for them | pictures a run | × a picture's inference time |");
    console.log("|---|---|---|---|---|---|---|");
    for (const row of r.rows) {
      const name = String(row.photo).includes("12mp") ? "12 MP" : "1 MP";
      const perRun = typeof row.gpuRuns === "number" && row.gpuRuns > 0 ? (Number(row.gpuPictures) / row.gpuRuns).toFixed(2) : "–";
      const ofTarget = inferenceMs ? (Number(row.perSecond) * (inferenceMs / 1000)).toFixed(2) : "–";
      console.log(`| ${name} | ${row.callers} | ${row.perSecond} | ${row.pictures} | ${row.gpuRuns ?? "–"} | ${perRun} | ${ofTarget} |`);
    }
  }
}

const exits = Number(values.exits);
if (!skip.has("exits") && exits > 0) {
  const tally: Record<string, number> = {};
  const parallel = Math.max(1, Number(values["exit-parallel"]));
  let used = "";
  for (let i = 0; i < exits; i += parallel) {
    const wave = await Promise.all(Array.from({ length: Math.min(parallel, exits - i) }, () => child(["bench/webgpu-child.ts", "exit", small])));
    for (const o of wave) {
      const key = `exit ${o.code ?? "–"}${o.signal ? `, signal ${o.signal}` : ""}${o.json ? "" : " (no result)"}`;
      tally[key] = (tally[key] ?? 0) + 1;
      if (o.json) used = `${o.json.model} / ${o.json.backend}`;
    }
  }
  console.log(`\n${exits} fresh processes (${parallel} at a time), each createRemover → settled → remove() → dispose → its own end (ran on ${used || "–"}):`);
  for (const [k, n] of Object.entries(tally)) console.log(`- ${k}: ${n}`);
}
