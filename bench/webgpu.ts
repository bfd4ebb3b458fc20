// WebGPU against WebAssembly on this machine, in one run. Deno only: Node 20 has no WebGPU.
//   1. the adapter Deno offers: a software one (isFallbackAdapter) means no GPU, and its
//      rows then time a CPU rasteriser, not a GPU;
//   2. per model and backend, a bare session in a fresh process: start, first inference and
//      the median of the later ones on a 1024² input (scripts/deno-inference-time.ts);
//   3. per backend, createRemover + two remove() of a 12 MP JPEG in a fresh process
//      (bench/webgpu-child.ts, the built package): a cold user's time to a first cut-out, then
//      a warm call.
// Ratios are WebGPU's time over WebAssembly's, same model, same run.
//   deno run -A bench/webgpu.ts [--models int8-static,medium] [--runs 5] [--threads N] [--photo a.jpg]
//                               [--backends wasm,webgpu] [--child-timeout seconds] [--remover-models a,b]
import { parseArgs } from "node:util";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { median } from "./median.ts";

const { values } = parseArgs({
  options: {
    models: { type: "string", default: DEFAULT_MODEL },
    runs: { type: "string", default: "5" },
    threads: { type: "string", default: String(availableParallelism()) },
    photo: { type: "string" },
    backends: { type: "string", default: "wasm,webgpu" },
    "child-timeout": { type: "string", default: "900" },
    "remover-models": { type: "string" },
  },
});
const models = values.models!.split(",").filter(Boolean);
const threads = values.threads!;
// WebAssembly first: the ratios divide by its row.
const backends = values.backends!.split(",").filter((b) => b === "wasm" || b === "webgpu");

const run = promisify(execFile);

/** A fresh Deno process (this one's binary) running `args`; its last JSON line, or why not. */
async function child(args: string[]): Promise<Record<string, unknown>> {
  const timeout = Number(values["child-timeout"]) * 1000;
  // The child's progress lines (stderr) are passed on, also when it was stopped.
  const out = await run(process.execPath, ["run", "-A", ...args], { timeout, maxBuffer: 1 << 24 }).catch(
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

console.log("\n| model | backend | session start s | first run s | later runs, median s | later / WebAssembly's |");
console.log("|---|---|---|---|---|---|");
for (const model of models) {
  const rows: Record<string, Record<string, unknown>> = {};
  for (const backend of backends) {
    rows[backend] = await child(["scripts/deno-inference-time.ts", backend, threads, values.runs!, model]);
  }
  const later = (r: Record<string, unknown>) => (Array.isArray(r.runMs) && r.runMs.length > 1 ? median(r.runMs.slice(1) as number[]) : undefined);
  for (const backend of backends) {
    const r = rows[backend]!;
    if (r.error) {
      console.log(`| ${model} | ${backend} | ${String(r.error).replaceAll("\n", " ").replaceAll("|", "/")} | | | |`);
      continue;
    }
    const runs = r.runMs as number[];
    console.log(`| ${model} | ${r.backend} | ${s(r.createMs)} | ${s(runs[0])} | ${s(later(r))} | ${ratio(later(r), later(rows.wasm ?? {}))} |`);
  }
}

let photo = values.photo;
if (!photo) {
  const { benchInputs } = await import("./inputs.ts");
  const [big] = await benchInputs();
  photo = join(tmpdir(), "pixeldrop-webgpu-12mp.jpg");
  writeFileSync(photo, big!.bytes);
}
const removerModels = values["remover-models"] === undefined ? models : values["remover-models"].split(",").filter(Boolean);
console.log("\n| model | backend asked / used | createRemover s | first remove s | second remove s | create + first / WebAssembly's | RSS MiB |");
console.log("|---|---|---|---|---|---|---|");
for (const model of removerModels) {
  const rows: Record<string, Record<string, unknown>> = {};
  for (const backend of backends) rows[backend] = await child(["bench/webgpu-child.ts", backend, model, photo, threads]);
  const cold = (r: Record<string, unknown>) => (typeof r.createMs === "number" && typeof r.firstMs === "number" ? r.createMs + r.firstMs : undefined);
  for (const backend of backends) {
    const r = rows[backend]!;
    if (r.error) {
      console.log(`| ${model} | ${backend} | ${String(r.error).replaceAll("\n", " ").replaceAll("|", "/")} | | | | |`);
      continue;
    }
    console.log(`| ${model} | ${backend} / ${r.used} | ${s(r.createMs)} | ${s(r.firstMs)} | ${s(r.secondMs)} | ${ratio(cold(r), cold(rows.wasm ?? {}))} | ${r.rssMiB} |`);
  }
}
