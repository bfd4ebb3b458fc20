// The planned WebGPU run against onnxruntime-web's WebGPU provider, in one process, on the
// default model's GPU form: for each, one warm-up run, one run with every WebGPU call
// counted and timed (bench/webgpu-call-count.ts: calls by type, and the JavaScript time
// spent inside them), then `--runs` runs timed without the counter. Prints both medians,
// planned ÷ provider, the calls a run makes by type, and what share of a run the calls'
// own JavaScript time is (on a software adapter the kernels dominate, so the calls decide
// only on a GPU); one JSON line last.
//   deno run -A bench/webgpu-calls.ts [--size 128] [--batch 1] [--runs 3] [--model int8-static-gpu] [--paths provider,planned]
// `npm run bench:webgpu-calls`; on a GPU machine it runs from scripts/webgpu-bench-device.sh.
import { parseArgs } from "node:util";
import { cpus } from "node:os";
import { readFileSync } from "node:fs";
import { locateAssets } from "../src/engine/assets/locate.ts";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { bindCard } from "../src/engine/inference/graph-contract.ts";
import { readGraphIo } from "../src/engine/assets/onnx-io.ts";
import { createMaskSession } from "../src/engine/inference/session.ts";
import type { WebGpuRun } from "../src/engine/inference/runner.ts";
import { lastPlannedRefusal } from "../src/engine/inference/planned/start-planned.ts";
import { decodeImage, resizeToRGB } from "../src/engine/imaging/index.ts";
import { countWebGpuCalls, totalCalls } from "./webgpu-call-count.ts";
import { benchPhoto } from "./inputs.ts";
import { median } from "./median.ts";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "128" },
    batch: { type: "string", default: "1" },
    runs: { type: "string", default: "3" },
    model: { type: "string", default: "int8-static-gpu" },
    paths: { type: "string", default: "provider,planned" },
  },
});
const side = Number(values.size);
const batch = Number(values.batch);
const runs = Number(values.runs);
const paths = values.paths!.split(",") as WebGpuRun[];

const gpu = (globalThis as unknown as { navigator: { gpu?: { requestAdapter(): Promise<{ info: { description: string; isFallbackAdapter: boolean } } | null> } } }).navigator.gpu;
const adapter = await gpu?.requestAdapter();
if (!adapter) {
  console.error("no WebGPU adapter: install Mesa's Vulkan driver (apt-get install mesa-vulkan-drivers libvulkan1) or run on a GPU");
  process.exit(1);
}
const cpuInfo = readFileSync("/proc/cpuinfo", "utf8");
const simd = ["avx512f", "avx2"].find((f) => new RegExp(`\\b${f}\\b`).test(cpuInfo)) ?? "no AVX2";
console.log(`adapter: ${adapter.info.description}${adapter.info.isFallbackAdapter ? " (software)" : ""}; cpu: ${cpus()[0]?.model}, ${cpus().length} cores, SIMD ${simd}`);

const dirs = await locateAssets({ model: values.model! }); // a GPU form is derived on first use
const resolved = await resolveModel({ model: values.model!, modelsDir: dirs.modelsDir });
if (!resolved.ok) throw new Error(resolved.title);
const bound = bindCard(resolved.entry, await readGraphIo(resolved.path));
if (!bound.ok) throw new Error(bound.problems.join("; "));
const modelPath = resolved.path;
const model = { ...bound.model, inputSize: [side, side] as [number, number] };
const decoded = await decodeImage(await benchPhoto());
if (!decoded.ok) throw new Error("bench photo does not decode");
const picture = resizeToRGB(decoded.image, side, side);
const pictures = Array.from({ length: batch }, () => picture);

interface PathResult {
  path: WebGpuRun;
  ran: string;
  startMs: number;
  medianMs: number;
  runsMs: number[];
  calls: number;
  callMs: number;
  byType: Record<string, { calls: number; ms: number }>;
}

async function measure(path: WebGpuRun): Promise<PathResult> {
  const t0 = performance.now();
  const session = await createMaskSession({ model, modelPath, backend: "webgpu", threads: 1, wasmDir: dirs.wasmDir, webgpuRun: path, maxBatch: batch });
  const startMs = performance.now() - t0;
  const once = () => (batch > 1 && session.runBatch ? session.runBatch(pictures) : session.run(picture));
  try {
    await once();
    const counter = countWebGpuCalls();
    let counted: Map<string, { calls: number; ms: number }>;
    try {
      await once();
      counted = counter.counts();
    } finally {
      counter.stop();
    }
    const runsMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await once();
      runsMs.push(performance.now() - t);
    }
    const byType = Object.fromEntries([...counted].sort((a, b) => b[1].calls - a[1].calls));
    return { path, ran: session.webgpuRun ?? "?", startMs, medianMs: median(runsMs), runsMs, calls: totalCalls(counted), callMs: [...counted.values()].reduce((s, c) => s + c.ms, 0), byType };
  } finally {
    await session.dispose();
  }
}

const results: PathResult[] = [];
for (const path of paths) {
  const r = await measure(path);
  results.push(r);
  if (path === "planned" && r.ran !== "planned") console.log(`planned run refused: ${lastPlannedRefusal}`);
}
const f = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
console.log(`\n${values.model} at ${side}² × ${batch}, ${runs} timed runs each`);
console.log("path      ran       start ms  median ms  calls/run  calls' own ms  share of run");
for (const r of results) {
  console.log(`${r.path.padEnd(9)} ${r.ran.padEnd(9)} ${f(r.startMs).padStart(8)}  ${f(r.medianMs).padStart(9)}  ${String(r.calls).padStart(9)}  ${f(r.callMs).padStart(13)}  ${((100 * r.callMs) / r.medianMs).toFixed(1).padStart(11)}%`);
}
const byPath = Object.fromEntries(results.map((r) => [r.path, r]));
if (byPath.planned && byPath.provider) {
  console.log(`planned ÷ provider: time ${(byPath.planned.medianMs / byPath.provider.medianMs).toFixed(3)}×, calls ${(byPath.planned.calls / byPath.provider.calls).toFixed(3)}×`);
}
const types = [...new Set(results.flatMap((r) => Object.keys(r.byType)))];
console.log(`\ncalls a run makes, by type (count / JavaScript ms inside them)\n${"type".padEnd(38)}${results.map((r) => r.path.padStart(18)).join("")}`);
for (const t of types) console.log(`${t.padEnd(38)}${results.map((r) => (r.byType[t] ? `${r.byType[t]!.calls} / ${f(r.byType[t]!.ms)}` : "-").padStart(18)).join("")}`);
console.log(JSON.stringify({ bench: "webgpu-calls", adapter: adapter.info.description, software: adapter.info.isFallbackAdapter, model: values.model, side, batch, runs, results: results.map(({ byType: _b, ...rest }) => rest) }));
