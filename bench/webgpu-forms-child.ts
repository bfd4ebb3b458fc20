// One fresh Deno process of bench/webgpu-forms.ts: one form of the GPU model on WebGPU,
// timed in the parts of its start and then warm at each batch size, fed and read through
// fixed GPU buffers as the engine feeds it (webgpu-io.ts). Prints one JSON line; writes the
// first picture's mask values (float32) to `maskOut` for the parent to compare forms.
//   deno run -A bench/webgpu-forms-child.ts <form json> <maskOut>
// form: { model, half, capture, batches: number[], side, runs, optimization, teardown }
import { readFileSync, writeFileSync } from "node:fs";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../src/engine/assets/paths.ts";
import { parseModel, writeModel } from "../src/engine/assets/onnx-graph.ts";
import { batchFree, halfActivations } from "../src/engine/assets/gpu-graph.ts";
import { configureOrtWeb, importOrtWeb, ortWebSessionOptions } from "../src/engine/inference/backend-ort-web.ts";
import { flattenNestedBindings } from "./webgpu-capture.ts";
import { median } from "./median.ts";

interface Form {
  model: string;
  half: boolean;
  capture: boolean;
  batches: number[];
  side: number;
  runs: number;
  optimization: "disabled" | "basic" | "extended" | "all";
  /** "release": sessions released and the device destroyed before exit; "none": exit at once. */
  teardown: "release" | "none";
}
const form = JSON.parse(process.argv[2]!) as Form;
const maskOut = process.argv[3]!;
const t = () => performance.now();
const parts: Record<string, number> = {};
const spent: Record<string, number> = {};
let dispatches = 0;

// Time spent inside the WebGPU calls that make up a start: pipelines (shader compiles),
// buffers, writes (the weights' upload) and waits.
const g = globalThis as unknown as Record<string, { prototype: Record<string, unknown> } | undefined>;
function timeCalls(proto: Record<string, unknown> | undefined, name: string): void {
  const original = proto?.[name] as ((...a: unknown[]) => unknown) | undefined;
  if (!proto || typeof original !== "function") return;
  proto[name] = function (this: unknown, ...args: unknown[]) {
    const s = t();
    const out = original.apply(this, args);
    if (out instanceof Promise) return out.finally(() => (spent[name] = (spent[name] ?? 0) + t() - s));
    spent[name] = (spent[name] ?? 0) + t() - s;
    return out;
  };
}
for (const n of ["createComputePipeline", "createComputePipelineAsync", "createShaderModule", "createBuffer", "createBindGroup"]) timeCalls(g.GPUDevice?.prototype, n);
timeCalls(g.GPUQueue?.prototype, "writeBuffer");
timeCalls(g.GPUQueue?.prototype, "submit");
timeCalls(g.GPUBuffer?.prototype, "mapAsync");
const dispatch = g.GPUComputePassEncoder?.prototype.dispatchWorkgroups as (...a: unknown[]) => unknown;
g.GPUComputePassEncoder!.prototype.dispatchWorkgroups = function (this: unknown, ...a: unknown[]) {
  dispatches++;
  return dispatch.apply(this, a);
};
if (form.capture) flattenNestedBindings();
const snapshot = () => Object.fromEntries(Object.entries(spent).map(([k, v]) => [k, Math.round(v)]));
const resetSpent = () => Object.keys(spent).forEach((k) => delete spent[k]);

let s0 = t();
const adapter = await navigator.gpu.requestAdapter();
parts.adapterMs = t() - s0;
const info = adapter?.info;
const hasF16 = adapter?.features.has("shader-f16") ?? false;

s0 = t();
const ort = await importOrtWeb("webgpu");
configureOrtWeb(ort, PACKAGE_WASM_DIR, 1);
parts.importMs = t() - s0;

const resolved = await resolveModel({ model: form.model, modelsDir: PACKAGE_MODELS_DIR });
if (!resolved.ok) throw new Error(resolved.title);
s0 = t();
const graph = parseModel(new Uint8Array(readFileSync(resolved.path)));
batchFree(graph);
if (form.half) halfActivations(graph);
const bytes = writeModel(graph);
parts.rewriteMs = t() - s0;

const { inputName, outputName } = resolved.entry;
const side = form.side;
const plane = side * side;
type Session = Awaited<ReturnType<typeof ort.InferenceSession.create>>;
const sessionOptions = {
  ...ortWebSessionOptions("webgpu"),
  graphOptimizationLevel: form.optimization,
  preferredOutputLocation: { [outputName]: "gpu-buffer" as const },
  ...(form.capture ? { enableGraphCapture: true } : {}),
};
const create = async (): Promise<Session> => ort.InferenceSession.create(bytes, sessionOptions);

/** A fixed test picture k: smooth gradients with a disc, as float input in [-0.5, 0.5]. */
function picture(k: number): Float32Array {
  const a = new Float32Array(3 * plane);
  for (let y = 0; y < side; y++)
    for (let x = 0; x < side; x++) {
      const inDisc = (x - side / 2) ** 2 + (y - side / 2 - k * 7) ** 2 < (side / 3) ** 2;
      for (let c = 0; c < 3; c++) a[c * plane + y * side + x] = ((inDisc ? 200 - 30 * c : (x + y * (c + 1) + 40 * k) % 256) / 255) - 0.5;
    }
  return a;
}

interface Gpu {
  createBuffer(d: { size: number; usage: number }): { destroy(): void; mapAsync(m: number): Promise<void>; getMappedRange(): ArrayBuffer; unmap(): void };
  createCommandEncoder(): { copyBufferToBuffer(...a: unknown[]): void; finish(): unknown };
  queue: { writeBuffer(b: unknown, o: number, d: ArrayBufferView): void; submit(c: unknown[]): void };
  destroy?(): void;
}

/** Warm runs at one batch size on `session`: fixed input and output buffers, one read-back each. */
async function atBatch(session: Session, n: number) {
  const device = (await ort.env.webgpu.device) as unknown as Gpu;
  const input = device.createBuffer({ size: n * 3 * plane * 4, usage: 0x80 | 0x8 | 0x4 });
  const output = device.createBuffer({ size: n * plane * 4, usage: 0x80 | 0x4 | 0x8 });
  const readBack = device.createBuffer({ size: n * plane * 4, usage: 0x1 | 0x8 });
  const feed = ort.Tensor.fromGpuBuffer(input as never, { dataType: "float32", dims: [n, 3, side, side] });
  const fetch = ort.Tensor.fromGpuBuffer(output as never, { dataType: "float32", dims: [n, 1, side, side] });
  const pics = Array.from({ length: n }, (_, k) => picture(k));
  pics.forEach((p, k) => device.queue.writeBuffer(input, k * 3 * plane * 4, p));
  const once = async (): Promise<Float32Array> => {
    await session.run({ [inputName]: feed }, { [outputName]: fetch });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(output, 0, readBack, 0, n * plane * 4);
    device.queue.submit([enc.finish()]);
    await readBack.mapAsync(1);
    const out = new Float32Array(readBack.getMappedRange().slice(0));
    readBack.unmap();
    return out;
  };
  resetSpent();
  let s = t();
  const first = await once();
  const firstMs = t() - s;
  const firstCalls = snapshot();
  const ms: number[] = [];
  let last = first;
  for (let i = 0; i < form.runs; i++) {
    // Each run writes its pictures again, as the engine does.
    pics.forEach((p, k) => device.queue.writeBuffer(input, k * 3 * plane * 4, p));
    dispatches = 0;
    s = t();
    last = await once();
    ms.push(t() - s);
  }
  for (const b of [input, output, readBack]) b.destroy();
  const warm = median(ms);
  return { n, firstMs: Math.round(firstMs), firstCalls, warmMs: Math.round(warm * 10) / 10, perPictureMs: Math.round((warm / n) * 10) / 10, dispatches, stable: maxLevels(first, last), out: last.subarray(0, plane) };
}

function maxLevels(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!) * 255);
  return Math.round(m * 1000) / 1000;
}

const rows = [];
let mask: Float32Array | undefined;
let createMs: number | undefined;
let createCalls: Record<string, number> | undefined;
let shared: Session | undefined;
const sessions: Session[] = [];
for (const n of form.batches) {
  // A captured graph is one shape: a session of its own for each batch size.
  let session = form.capture ? undefined : shared;
  if (!session) {
    resetSpent();
    s0 = t();
    session = await create();
    sessions.push(session);
    if (createMs === undefined) {
      createMs = t() - s0;
      createCalls = snapshot();
    }
    if (!form.capture) shared = session;
  }
  const r = await atBatch(session, n);
  mask ??= r.out;
  const { out: _, ...row } = r;
  rows.push(row);
}
if (mask) writeFileSync(maskOut, new Uint8Array(mask.buffer, mask.byteOffset, mask.byteLength));
const result = {
  form: { ...form, hasF16 },
  adapter: info ? `${info.vendor} ${info.architecture} ${info.description}`.trim() : "none",
  parts: Object.fromEntries(Object.entries({ ...parts, createMs: createMs ?? NaN }).map(([k, v]) => [k, Math.round(v)])),
  createCalls,
  rows,
};
console.log(JSON.stringify(result));
if (form.teardown === "release") {
  for (const s of sessions) await s.release();
  ((await ort.env.webgpu.device) as unknown as Gpu).destroy?.();
}
process.exit(0);
