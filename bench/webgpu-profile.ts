// Where one warm WebGPU inference spends its time, in a fresh Deno process. ORT-web writes
// its own profile into the WebAssembly runtime's in-memory file system, out of reach, so
// the WebGPU calls it makes are counted here instead, by wrapping the API it calls
// (Deno's GPUQueue, GPUDevice, GPUBuffer, GPUComputePassEncoder prototypes):
//   - wall time of a warm run with the mask read back to the CPU, and with it left on the
//     GPU (preferredOutputLocation "gpu-buffer"): the difference is the read-back;
//   - per run: compute dispatches (kernels), queue submissions, buffers created (and their
//     bytes), writes to buffers, buffer-to-buffer copies, and mapAsync waits with the
//     time spent in them (a CPU hand-off or a read-back each);
//   - the engine's own mask session (src/engine/inference/session.ts) on a 1024² picture, fed
//     as it is by default (input and output in GPU buffers, webgpu-io.ts) and with CPU
//     tensors: wall time per warm run, bytes to mask, with the same counts;
//   - the nodes ORT placed off the GPU (scripts/webgpu-placement.ts), with their op types.
// GPU kernel time is the wall time less the waits it cannot overlap; a run whose dispatches
// are few and whose waits are one read-back is as close to the GPU's own time as ORT gets.
//   deno run -A bench/webgpu-profile.ts <model> [runs] [models dir]      prints one JSON line
import { configureOrtWeb, importOrtWeb, ortWebSessionOptions } from "../src/engine/inference/backend-ort-web.ts";
import { createMaskSession } from "../src/engine/inference/session.ts";
import type { WebGpuFeed } from "../src/engine/inference/runner.ts";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../src/engine/assets/paths.ts";
import { readFileSync } from "node:fs";
import { webgpuPlacement } from "../scripts/webgpu-placement.ts";
import { median } from "./median.ts";

const [modelArg = "int8-static-gpu", runsArg = "5", modelsDir = PACKAGE_MODELS_DIR] = process.argv.slice(2);
const resolved = await resolveModel({ model: modelArg, modelsDir });
if (!resolved.ok) throw new Error(resolved.title);
const model = resolved;

type Counts = Record<string, number>;
const counts: Counts = {};
const add = (k: string, v = 1) => (counts[k] = (counts[k] ?? 0) + v);
/** Wraps `proto[name]` to count calls (and, for promises, the time until they settle). */
function wrap(proto: object | undefined, name: string, measure?: (args: unknown[]) => number) {
  if (!proto) return;
  const p = proto as Record<string, unknown>;
  const original = p[name] as ((...a: unknown[]) => unknown) | undefined;
  if (typeof original !== "function") return;
  p[name] = function (this: unknown, ...args: unknown[]) {
    add(name);
    if (measure) add(`${name}Bytes`, measure(args));
    const started = performance.now();
    const out = original.apply(this, args);
    if (out instanceof Promise) out.finally(() => add(`${name}Ms`, performance.now() - started)).catch(() => {});
    return out;
  };
}
const g = globalThis as unknown as Record<string, { prototype?: object } | undefined>;
wrap(g.GPUQueue?.prototype, "submit");
wrap(g.GPUQueue?.prototype, "writeBuffer", (a) => (a[2] as { byteLength?: number })?.byteLength ?? 0);
wrap(g.GPUQueue?.prototype, "onSubmittedWorkDone");
wrap(g.GPUDevice?.prototype, "createBuffer", (a) => (a[0] as { size?: number })?.size ?? 0);
wrap(g.GPUDevice?.prototype, "createBindGroup");
wrap(g.GPUDevice?.prototype, "createComputePipeline");
wrap(g.GPUDevice?.prototype, "createComputePipelineAsync");
wrap(g.GPUBuffer?.prototype, "mapAsync");
wrap(g.GPUCommandEncoder?.prototype, "copyBufferToBuffer");
wrap(g.GPUComputePassEncoder?.prototype, "dispatchWorkgroups");

const ort = await importOrtWeb("webgpu");
configureOrtWeb(ort, PACKAGE_WASM_DIR, 1);
const bytes = new Uint8Array(readFileSync(model.path));
const [h, w] = model.entry.inputSize;
const input = new ort.Tensor("float32", new Float32Array(3 * h * w).fill(0.25), [1, 3, h, w]);
const name = model.entry.outputName;

async function timed(session: Awaited<ReturnType<typeof ort.InferenceSession.create>>, runs: number, readBack: boolean) {
  const ms: number[] = [];
  const perRun: Counts[] = [];
  for (let i = 0; i < runs; i++) {
    for (const k of Object.keys(counts)) delete counts[k];
    const t0 = performance.now();
    const out = await session.run({ [model.entry.inputName]: input }, [name]);
    if (readBack) await out[name]!.getData();
    ms.push(performance.now() - t0);
    out[name]!.dispose();
    perRun.push({ ...counts });
  }
  return { ms, counts: perRun.at(-1)! };
}

const t0 = performance.now();
const cpuOut = await ort.InferenceSession.create(bytes, ortWebSessionOptions("webgpu"));
const createMs = performance.now() - t0;
const runs = Number(runsArg);
const read = await timed(cpuOut, runs + 1, true);
await cpuOut.release();
const gpuOut = await ort.InferenceSession.create(bytes, { ...ortWebSessionOptions("webgpu"), preferredOutputLocation: "gpu-buffer" });
const kept = await timed(gpuOut, runs + 1, false);
await gpuOut.release();

const round = (c: Counts) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Math.round(v * 10) / 10]));
/** The engine's mask session fed one way: warm runs' wall times (the first run is dropped) and the last run's counts. */
async function maskSessionRuns(webgpuFeed: WebGpuFeed) {
  const session = await createMaskSession({ model: model.entry, modelPath: model.path, backend: "webgpu", threads: 1, wasmDir: PACKAGE_WASM_DIR, webgpuFeed });
  const rgb = new Uint8Array(h * w * 3).map((_, i) => (i * 37) & 255);
  const ms: number[] = [];
  for (let i = 0; i <= runs; i++) {
    for (const k of Object.keys(counts)) delete counts[k];
    const t = performance.now();
    await session.run(rgb);
    ms.push(performance.now() - t);
  }
  const last = { ...counts };
  await session.dispose();
  return { feed: session.webgpuFeed, warmMs: Math.round(median(ms.slice(1))), perWarmRun: round(last) };
}
const viaGpuBuffers = await maskSessionRuns("gpu-buffers");
const viaTensors = await maskSessionRuns("tensors");

const placement = await webgpuPlacement(model.path);
console.log(
  JSON.stringify({
    model: modelArg,
    createMs: Math.round(createMs),
    firstRunMs: Math.round(read.ms[0]!),
    warmReadBackMs: Math.round(median(read.ms.slice(1))),
    warmOutputOnGpuMs: Math.round(median(kept.ms.slice(1))),
    warmRunsMs: read.ms.slice(1).map(Math.round),
    perWarmRun: round(read.counts),
    perWarmRunOutputOnGpu: round(kept.counts),
    maskSession: { gpuBuffers: viaGpuBuffers, tensors: viaTensors },
    placement,
  }),
);
process.exit(0);
