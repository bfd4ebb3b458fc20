// The WebGPU backend under `deno test`, on a machine without a GPU: Deno's software
// adapter (Mesa's lavapipe, `isFallbackAdapter: true`) runs onnxruntime-web's WebGPU build.
// IS-Net would take minutes there, so the model is a tiny graph with IS-Net's contract
// (test/support/tiny-onnx.ts), described by a manifest and resolved as the service resolves
// MODEL, then run through the engine's mask session on each backend.
//
// Without an adapter every test here is skipped with one line naming the packages to
// install, unless CI requires them (webgpu-gate.ts).
import { PACKAGE_WASM_DIR } from "../../src/engine/assets/paths.ts";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import { createMaskSession, type BackendChoice } from "../../src/engine/inference/session.ts";
import type { WebGpuRun } from "../../src/engine/inference/runner.ts";
import { maskDifference, writeTinyModel } from "../support/tiny-onnx.ts";
import { deriveModel } from "../../src/engine/assets/derive.ts";
import { join } from "node:path";
import { createRemover } from "../../dist/index.js";
import { openEngine } from "../../src/engine/library/open-engine.ts";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { dequantiseToFloat } from "../../src/engine/assets/dequantise-float.ts";
import { webgpuPlacement } from "../../scripts/webgpu-placement.ts";
import { PACKAGE_MODELS_DIR } from "../../src/engine/assets/paths.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { NO_ADAPTER, gpuTestIn } from "./webgpu-gate.ts";
import { openGlEglIn } from "./egl-check.ts";

const sha256 = async (b: Uint8Array) =>
  Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", b)), (x) => x.toString(16).padStart(2, "0")).join("");

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

const SIZE = 64;

/** The tiny model in a folder of its own with its manifest, resolved by name like MODEL=tiny. */
async function tinyModel() {
  const tiny = writeTinyModel(SIZE, SIZE);
  const resolved = await resolveModel({ model: "tiny", modelsDir: tiny.dir, verify: true });
  assert(resolved.ok, `the manifest describes the tiny model: ${resolved.ok ? "" : resolved.title}`);
  return { tiny, resolved };
}

/** A varied picture: gradients in each channel, so the mask is far from constant. */
function picture(): Uint8Array {
  const rgb = new Uint8Array(SIZE * SIZE * 3);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const i = (y * SIZE + x) * 3;
      rgb[i] = (x * 4) & 255;
      rgb[i + 1] = (y * 4) & 255;
      rgb[i + 2] = ((x ^ y) * 8) & 255;
    }
  }
  return rgb;
}

async function maskWith(backend: BackendChoice, path: string, entry: Parameters<typeof createMaskSession>[0]["model"]) {
  const session = await createMaskSession({ model: entry, modelPath: path, backend, threads: 1, wasmDir: PACKAGE_WASM_DIR });
  try {
    return { backend: session.backend, mask: await session.run(picture()) };
  } finally {
    await session.dispose();
  }
}

/** A test that needs an adapter: skipped without one, unless PD_REQUIRE_WEBGPU=1 (CI). */
const gpuTest = gpuTestIn("test/deno/webgpu_test.ts");

/** The adapter Deno offers here: Mesa's software one without a GPU (CI), a GPU's where there is one. */
async function adapterIsSoftware(): Promise<boolean> {
  assert(navigator.gpu, "navigator.gpu is missing");
  const adapter = await navigator.gpu.requestAdapter();
  assert(adapter, NO_ADAPTER);
  return adapter.info.isFallbackAdapter;
}

gpuTest("Deno offers a WebGPU adapter here (the precondition of the tests below)", async () => {
  const software = await adapterIsSoftware();
  console.log(`WebGPU adapter: ${software ? "software (no GPU)" : "hardware"}`);
});

gpuTest("the adapter came without wgpu's OpenGL backend (Mesa's libEGL), whose exit handler can abort the run", async () => {
  // With every wgpu backend enabled, Deno also opens OpenGL through libEGL; Mesa's exit
  // handler then races a runtime thread's exit and aborts the whole test process after the
  // last test ("double free or corruption (out)", about 1 run in 20). deno.json's test
  // tasks set DENO_WEBGPU_BACKEND so that it is never loaded. NVIDIA's Vulkan driver
  // loads its own libEGL_nvidia, which is not OpenGL's doing (egl-check.ts).
  const software = await adapterIsSoftware();
  if (Deno.build.os !== "linux") return;
  const egl = openGlEglIn(Deno.readTextFileSync("/proc/self/maps"), software);
  assert(!egl, `libEGL is loaded (${egl}): run with DENO_WEBGPU_BACKEND=vulkan,metal,dx12 (deno task test sets it)`);
});

gpuTest("backend webgpu runs the model on the software adapter and gives the WebAssembly mask", async () => {
  const { tiny, resolved } = await tinyModel();
  try {
    const gpu = await maskWith("webgpu", resolved.path, resolved.entry);
    const cpu = await maskWith("wasm", resolved.path, resolved.entry);
    assert(gpu.backend === "webgpu", `asked for webgpu, ran on ${gpu.backend}`);
    assert(cpu.backend === "wasm", `asked for wasm, ran on ${cpu.backend}`);
    assert(gpu.mask.length === SIZE * SIZE, `mask has ${gpu.mask.length} values`);
    // A mask with many levels, so agreement below means the same numbers, not two blanks.
    assert(new Set(cpu.mask).size > 50, `the WebAssembly mask has only ${new Set(cpu.mask).size} levels`);
    const worst = maskDifference(cpu.mask, gpu.mask);
    // Float32 on both; GPU kernels may sum in another order, so one level of 255 is allowed.
    assert(worst <= 1, `WebGPU and WebAssembly masks differ by up to ${worst} levels`);
  } finally {
    tiny.remove();
  }
});

gpuTest("fed through GPU buffers, picture after picture gives WebAssembly's mask and the CPU-tensor feed's", async () => {
  // The session's input and output stay on the GPU (webgpu-io.ts): the picture goes up as
  // bytes and a compute pass makes the model's input. Several different pictures in a row,
  // so a buffer bound once and read stale (the next picture getting the first one's mask)
  // fails, as would a wrong channel, plane or normalisation. These feeds are onnxruntime-web's
  // provider's (the tiny graph is planned whole, so it is asked for); the planned run of the
  // same graph must give the same masks.
  const { tiny, resolved } = await tinyModel();
  const open = (backend: BackendChoice, webgpuFeed?: "gpu-buffers" | "tensors", webgpuRun: WebGpuRun = "provider") =>
    createMaskSession({ model: resolved.entry, modelPath: resolved.path, backend, threads: 1, wasmDir: PACKAGE_WASM_DIR, webgpuFeed, webgpuRun });
  // One at a time: ORT refuses to create two WebGPU sessions at once.
  const buffers = await open("webgpu");
  const tensors = await open("webgpu", "tensors");
  const planned = await open("webgpu", undefined, "planned");
  const cpu = await open("wasm");
  try {
    assert(buffers.webgpuFeed === "gpu-buffers" && buffers.webgpuRun === "provider", `the provider's default WebGPU feed is ${buffers.webgpuFeed} (${buffers.webgpuRun})`);
    assert(tensors.webgpuFeed === "tensors", `asked for CPU tensors, fed ${tensors.webgpuFeed}`);
    assert(planned.webgpuRun === "planned", `the tiny graph is planned whole, ran ${planned.webgpuRun}`);
    const pictures = [picture(), picture().map((v, i) => (i % 3 === 0 ? 255 - v : v)), picture().reverse(), picture().map((v) => v >> 1)];
    const first = await buffers.run(pictures[0]!);
    for (const [k, rgb] of pictures.entries()) {
      const [viaBuffers, viaTensors, onCpu] = [await buffers.run(rgb), await tensors.run(rgb), await cpu.run(rgb)];
      if (k > 0) assert(maskDifference(first, onCpu) > 10, `picture ${k} has the first picture's mask on the CPU: the pictures do not differ enough`);
      const worst = maskDifference(onCpu, viaBuffers);
      assert(worst <= 1, `picture ${k}: the GPU-buffer feed and WebAssembly differ by up to ${worst} levels`);
      const feeds = maskDifference(viaTensors, viaBuffers);
      assert(feeds <= 1, `picture ${k}: the two WebGPU feeds differ by up to ${feeds} levels`);
      const plannedWorst = maskDifference(onCpu, await planned.run(rgb));
      assert(plannedWorst <= 1, `picture ${k}: the planned run and WebAssembly differ by up to ${plannedWorst} levels`);
    }
  } finally {
    await Promise.all([buffers.dispose(), tensors.dispose(), planned.dispose(), cpu.dispose()]);
    tiny.remove();
  }
});

gpuTest("the default model's form (static int8 QDQ pairs) runs on webgpu and gives the WebAssembly mask", async () => {
  // The tiny graph rewritten as the default model is (derive.ts, quantiseStatic), with
  // ranges of the right kind for its two quantised tensors. WebGPU runs the pairs as
  // quantise/dequantise kernels around a float convolution (or hands them to the CPU);
  // WebAssembly fuses them into QLinearConv. Both round to the same uint8 grid.
  const { tiny, resolved } = await tinyModel();
  try {
    const bytes = deriveModel(tiny.model.bytes, { quantiseStatic: { keepFloat: [], ranges: { input: [-0.5, 0.5], h2: [0, 4] } } });
    const file = join(tiny.dir, "tiny-static.onnx");
    Deno.writeFileSync(file, bytes);
    const entry = { ...resolved.entry, file: "tiny-static.onnx", sha256: await sha256(bytes), bytes: bytes.length };
    const gpu = await maskWith("webgpu", file, entry);
    const cpu = await maskWith("wasm", file, entry);
    assert(gpu.backend === "webgpu", `asked for webgpu, ran on ${gpu.backend}`);
    assert(new Set(cpu.mask).size > 20, `the WebAssembly mask has only ${new Set(cpu.mask).size} levels`);
    const worst = maskDifference(cpu.mask, gpu.mask);
    console.log(`static tiny model: WebGPU and WebAssembly masks differ by up to ${worst} levels`);
    assert(worst <= 6, `WebGPU and WebAssembly masks differ by up to ${worst} levels`);
  } finally {
    tiny.remove();
  }
});

gpuTest("the GPU form of the static model runs every node on WebGPU and gives WebAssembly's mask", async () => {
  // The chain the default model takes to a GPU: float tiny model → static int8 (QDQ) →
  // its GPU form (weights dequantised to float16 + Cast, activation pairs removed).
  const { tiny, resolved } = await tinyModel();
  try {
    const ranges = { input: [-0.5, 0.5] as const, h2: [0, 4] as const };
    const stat = deriveModel(tiny.model.bytes, { quantiseStatic: { keepFloat: [], ranges } });
    const bytes = dequantiseToFloat(stat).bytes;
    const staticFile = join(tiny.dir, "tiny-static.onnx");
    const file = join(tiny.dir, "tiny-gpu.onnx");
    Deno.writeFileSync(staticFile, stat);
    Deno.writeFileSync(file, bytes);
    const placement = await webgpuPlacement(file);
    assert(placement.offGpu.length === 0, `nodes off the GPU: ${placement.offGpu.join(", ")}`);
    // The check can fail: the static form's quantise steps are on the CPU.
    assert((await webgpuPlacement(staticFile)).offGpu.length > 0, "the static form reports no CPU node: the placement is not being read");
    const entry = { ...resolved.entry, file: "tiny-gpu.onnx", sha256: await sha256(bytes), bytes: bytes.length };
    const gpu = await maskWith("webgpu", file, entry);
    const cpu = await maskWith("wasm", file, entry);
    const staticCpu = await maskWith("wasm", staticFile, { ...entry, file: "tiny-static.onnx", sha256: await sha256(stat), bytes: stat.length });
    assert(gpu.backend === "webgpu", `asked for webgpu, ran on ${gpu.backend}`);
    assert(new Set(cpu.mask).size > 20, `the WebAssembly mask has only ${new Set(cpu.mask).size} levels`);
    const same = maskDifference(cpu.mask, gpu.mask);
    assert(same <= 1, `the GPU form on WebGPU and on WebAssembly differ by up to ${same} levels`);
    // Against the static model on the CPU the only difference is the activations' 8-bit rounding.
    const vsStatic = maskDifference(staticCpu.mask, gpu.mask);
    console.log(`GPU form on WebGPU vs the static model on WebAssembly: up to ${vsStatic} levels`);
    assert(vsStatic <= 6, `the GPU form and the static model differ by up to ${vsStatic} levels`);
  } finally {
    tiny.remove();
  }
});

gpuTest("the default model's GPU form has every node on the WebGPU provider", async () => {
  // The real IS-Net: its Resize shape arithmetic folded, no quantise step left. Only the
  // session is started (placement is decided then); no inference on the software adapter.
  const resolved = await resolveModel({ model: "int8-static-gpu", modelsDir: PACKAGE_MODELS_DIR });
  let dir: string | undefined;
  let file = resolved.ok ? resolved.path : "";
  if (!resolved.ok) {
    const from = await resolveModel({ model: "int8-static", modelsDir: PACKAGE_MODELS_DIR });
    assert(from.ok, "the default model is assembled (npm ci)");
    dir = mkdtempSync(join(tmpdir(), "pd-gpu-form-"));
    file = join(dir, "gpu.onnx");
    Deno.writeFileSync(file, dequantiseToFloat(Deno.readFileSync(from.path)).bytes);
  }
  try {
    const placement = await webgpuPlacement(file);
    assert(placement.offGpu.length === 0, `nodes off the GPU: ${placement.offGpu.join(", ")}`);
    assert((placement.providers.WebGpuExecutionProvider ?? 0) > 300, `only ${placement.providers.WebGpuExecutionProvider} nodes on WebGPU`);
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

gpuTest("backend auto takes WebGPU only on a hardware adapter, and never for a model marked for the CPU", async () => {
  const software = await adapterIsSoftware();
  const { tiny, resolved } = await tinyModel();
  try {
    const auto = await maskWith("auto", resolved.path, resolved.entry);
    const expected = software ? "wasm" : "webgpu";
    assert(auto.backend === expected, `auto chose ${auto.backend} on a ${software ? "software" : "hardware"} adapter`);
    const cpuOnly = await maskWith("auto", resolved.path, { ...resolved.entry, autoBackend: "cpu" });
    assert(cpuOnly.backend === "wasm", `auto chose ${cpuOnly.backend} for a model marked autoBackend "cpu"`);
  } finally {
    tiny.remove();
  }
});

gpuTest("createRemover with backend webgpu runs in its pool worker with several threads, and cuts out what WebAssembly cuts out", async () => {
  // The library's defaults put the session in a worker thread with a thread per core: the
  // WebGPU bundle must start there (its URL resolution, its WebAssembly threads).
  const tiny = writeTinyModel(SIZE, SIZE);
  const photo = Deno.readFileSync(new URL("../fixtures/photos/rocket.jpg", import.meta.url));
  const alphaWith = async (backend: "webgpu" | "wasm") => {
    await using remover = await createRemover({ backend, model: tiny.path, workers: 1, threads: 2 });
    assert(remover.backend === backend, `asked for ${backend}, got ${remover.backend}`);
    const decoded = await decodeImage((await remover.remove(photo, { size: "preview" })).png);
    assert(decoded.ok, "the cut-out decodes");
    const { data } = decoded.image;
    return Uint8Array.from({ length: data.length / 4 }, (_, i) => data[i * 4 + 3]!);
  };
  try {
    const gpu = await alphaWith("webgpu");
    const cpu = await alphaWith("wasm");
    assert(new Set(cpu).size > 20, `the WebAssembly cut-out's alpha has only ${new Set(cpu).size} levels`);
    const worst = maskDifference(cpu, gpu);
    assert(worst <= 2, `WebGPU and WebAssembly cut-outs' alpha differ by up to ${worst} levels`);
  } finally {
    tiny.remove();
  }
});

gpuTest("a WebGPU engine has one session (one GPU) in its own thread, shared by its pipeline workers, warmed up before ready; a WebAssembly engine does not warm up", async () => {
  const tiny = writeTinyModel(SIZE, SIZE);
  try {
    for (const backend of ["webgpu", "wasm"] as const) {
      const engine = await openEngine({ model: tiny.path, backend, workers: 1, threads: 1, gpuWorkers: 3 });
      try {
        await engine.whenReady();
        const st = engine.state();
        assert(st.backend === backend, `the engine runs on ${st.backend}`);
        assert(st.model === "tiny", `the engine reports model ${st.model}`);
        if (backend === "webgpu") {
          assert(st.poolSize === 3, `a WebGPU engine asked for 3 pipeline workers has ${st.poolSize}`);
          assert(typeof st.warmRunMs === "number" && st.warmRunMs > 0, `a WebGPU engine's warm run: ${st.warmRunMs}`);
          assert(st.gpuBatches !== undefined, "a WebGPU engine reports its batches");
        } else {
          assert(st.poolSize === 1, `a WebAssembly engine of 1 worker has ${st.poolSize}`);
          assert(st.warmRunMs === undefined, `a WebAssembly engine warmed up (${st.warmRunMs} ms)`);
        }
      } finally {
        await engine.dispose();
      }
    }
  } finally {
    tiny.remove();
  }
});
