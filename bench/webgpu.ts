// WebGPU against WebAssembly on this machine, in one run. Deno only: Node 20 has no WebGPU.
//   1. the adapter Deno offers: a software one (isFallbackAdapter) means no GPU, and its
//      rows then time a CPU rasteriser, not a GPU;
//   2. per model and backend, a bare session in a fresh process: start, first inference and
//      the median of the later ones on a 1024² input (scripts/deno-inference-time.ts);
//   3. per backend, createRemover + two remove() of a 12 MP JPEG in a fresh process
//      (bench/webgpu-child.ts, the built package): a cold user's time to a first cut-out, then
//      a warm call.
//   4. the default model through createRemover with backend auto (which model and backend
//      it chose: on a hardware GPU the default's GPU form on WebGPU) and with backend wasm;
//   5. a profile of one warm WebGPU run of the GPU form (bench/webgpu-profile.ts): read-back
//      against output left on the GPU, dispatches, submissions, buffers, copies, waits, and
//      the nodes ORT placed off the GPU.
// Ratios are WebGPU's time over WebAssembly's, same model, same run; the default model on
// WebAssembly (--wasm-models) is the CPU host's baseline.
//   deno run -A bench/webgpu.ts [--models int8-static-gpu] [--wasm-models int8-static] [--runs 5] [--threads N]
//                               [--photo a.jpg] [--backends wasm,webgpu] [--child-timeout seconds]
//                               [--remover-backends auto,wasm] [--no-profile]
// On a GPU machine with no network: scripts/webgpu-bench-device.sh (docs/MODEL.md).
import { parseArgs } from "node:util";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { median } from "./median.ts";
import { locateAssets } from "../src/engine/assets/locate.ts";

const { values } = parseArgs({
  options: {
    models: { type: "string", default: "int8-static-gpu" },
    "wasm-models": { type: "string", default: DEFAULT_MODEL },
    "remover-backends": { type: "string", default: "auto,wasm" },
    "no-profile": { type: "boolean", default: false },
    runs: { type: "string", default: "5" },
    threads: { type: "string", default: String(availableParallelism()) },
    photo: { type: "string" },
    backends: { type: "string", default: "wasm,webgpu" },
    "child-timeout": { type: "string", default: "900" },
  },
});
const models = values.models!.split(",").filter(Boolean);
const wasmModels = values["wasm-models"]!.split(",").filter(Boolean);
const threads = values.threads!;
// WebAssembly first: the ratios divide by its row.
const backends = values.backends!.split(",").filter((b) => b === "wasm" || b === "webgpu");

const run = promisify(execFile);

/** A fresh Deno process (this one's binary) running `args`; its last JSON line, or why not. */
async function child(args: string[]): Promise<Record<string, unknown>> {
  const timeout = Number(values["child-timeout"]) * 1000;
  // The child's progress lines (stderr) are passed on, also when it was stopped.
  const out = await run(process.execPath, ["run", "-A", ...args], {
    timeout,
    maxBuffer: 1 << 24,
    // The child times a fresh process's first cut-out from here (Deno's start included).
    env: { ...process.env, PD_BENCH_SPAWNED_AT: String(Date.now()) },
  }).catch(
    (e: { code?: unknown; killed?: boolean; stdout?: string; stderr?: string }) => {
      process.stderr.write(e.stderr ?? "");
      return new Error(e.killed ? `stopped after ${values["child-timeout"]} s` : `exit ${String(e.code)}: ${String(e.stdout ?? "").slice(-300)}`);
    },
  );
  if (!(out instanceof Error)) process.stderr.write(out.stderr);
  if (out instanceof Error) return { error: out.message };
  const line = out.stdout.trim().split("\n").reverse().find((l) => l.startsWith("{"));
  return line ? JSON.parse(line) : { error: `no result: ${out.stdout.slice(-300)}` };
}

const s = (ms: unknown) => (typeof ms === "number" ? (ms / 1000).toFixed(2) : "–");
const ratio = (a: unknown, b: unknown) => (typeof a === "number" && typeof b === "number" ? (a / b).toFixed(3) : "–");

type AdapterInfo = { vendor: string; architecture: string; device: string; description: string; isFallbackAdapter?: boolean };
const gpu = (navigator as { gpu?: { requestAdapter(): Promise<{ info: AdapterInfo } | null> } }).gpu;
const info = (await gpu?.requestAdapter())?.info;
console.log(`adapter: ${info ? `${info.vendor} ${info.architecture} ${info.device} ${info.description}`.trim() : "none"}; fallback (software): ${info?.isFallbackAdapter ?? "–"}`);
console.log(`cores ${availableParallelism()}, wasm threads ${threads}, load ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`);

// Every model made whole first (the GPU form is derived here from the default's file), so
// the children only read.
for (const model of [...models, ...wasmModels]) await locateAssets({ model });

console.log("\n| model | backend | session start s | first run s | later runs, median s | later / WebAssembly's |");
console.log("|---|---|---|---|---|---|");
const later = (r: Record<string, unknown>) => (Array.isArray(r.runMs) && r.runMs.length > 1 ? median(r.runMs.slice(1) as number[]) : undefined);
const cpuBaseline: Record<string, Record<string, unknown>> = {};
for (const model of wasmModels) {
  const r = (cpuBaseline[model] = await child(["scripts/deno-inference-time.ts", "wasm", threads, values.runs!, model]));
  const runs = r.runMs as number[] | undefined;
  console.log(r.error ? `| ${model} | wasm | ${String(r.error).replaceAll("\n", " ")} | | | |` : `| ${model} | wasm | ${s(r.createMs)} | ${s(runs?.[0])} | ${s(later(r))} | 1.000 |`);
}
for (const model of models) {
  const rows: Record<string, Record<string, unknown>> = {};
  for (const backend of backends) {
    rows[backend] = await child(["scripts/deno-inference-time.ts", backend, threads, values.runs!, model]);
  }
  for (const backend of backends) {
    const r = rows[backend]!;
    if (r.error) {
      console.log(`| ${model} | ${backend} | ${String(r.error).replaceAll("\n", " ").replaceAll("|", "/")} | | | |`);
      continue;
    }
    const runs = r.runMs as number[];
    console.log(`| ${model} | ${r.backend} | ${s(r.createMs)} | ${s(runs[0])} | ${s(later(r))} | ${ratio(later(r), later(rows.wasm ?? {}))} |`);
  }
  for (const base of wasmModels) {
    const gpuLater = later(rows.webgpu ?? {});
    const cpuLater = later(cpuBaseline[base] ?? {});
    if (gpuLater && cpuLater) console.log(`\n${model} on WebGPU against ${base} on WebAssembly (${threads} threads), warm 1024² inference: ${(cpuLater / gpuLater).toFixed(1)}× faster (${s(gpuLater)} s against ${s(cpuLater)} s)`);
  }
}

let photo = values.photo;
if (!photo) {
  const { benchInputs } = await import("./inputs.ts");
  const [big] = await benchInputs();
  photo = join(tmpdir(), "pixeldrop-webgpu-12mp.jpg");
  writeFileSync(photo, big!.bytes);
}
// The default model as a user gets it: createRemover() with no model named.
const removerBackends = values["remover-backends"]!.split(",").filter(Boolean);
console.log(`\ncreateRemover({ backend }) with the default model, then remove() of a ${photo} twice, each in a fresh process:`);
console.log("\n| backend asked | model / backend used | createRemover s | first remove s | fresh process to first cut-out s | second remove (warm) s | RSS MiB |");
console.log("|---|---|---|---|---|---|---|");
const removerRows: Record<string, Record<string, unknown>> = {};
for (const backend of removerBackends) {
  const r = (removerRows[backend] = await child(["bench/webgpu-child.ts", backend, "default", photo, threads]));
  if (r.error) {
    console.log(`| ${backend} | ${String(r.error).replaceAll("\n", " ").replaceAll("|", "/")} | | | | | |`);
    continue;
  }
  console.log(`| ${backend} | ${r.model} / ${r.used} | ${s(r.createMs)} | ${s(r.firstMs)} | ${s(r.processToFirstMs)} | ${s(r.secondMs)} | ${r.rssMiB} |`);
}
const auto = removerRows.auto;
if (auto && !auto.error) console.log(`\nauto chose: model ${auto.model} on ${auto.used}`);
const [a, w] = [removerRows.auto, removerRows.wasm];
if (a && w && typeof a.secondMs === "number" && typeof w.secondMs === "number") {
  console.log(`12 MP remove(), warm: auto ${s(a.secondMs)} s against wasm ${s(w.secondMs)} s (${(w.secondMs / a.secondMs).toFixed(1)}×)`);
}

if (!values["no-profile"] && backends.includes("webgpu")) {
  for (const model of models) {
    const p = await child(["bench/webgpu-profile.ts", model, values.runs!]);
    console.log(`\nprofile of a warm WebGPU run of ${model}:`);
    console.log(JSON.stringify(p, null, 1));
  }
}
