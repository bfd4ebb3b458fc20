// The engine on a GPU, under Deno on its WebGPU adapter (Mesa's lavapipe without a GPU), with
// tiny models of IS-Net's contract (test/support/tiny-onnx.ts) made as the default model's
// GPU forms are (static int8 → GPU form, float32 or float16 activations, a batch dim):
//   - a batch of pictures in one run gives each picture's own mask; float16 activations stay
//     within the stated tolerance of float32's;
//   - pipeline workers share one session thread, and every cut-out is WebAssembly's (the
//     batching rule itself: test/inference/mask-batcher.test.ts);
//   - auto's handover: a GPU start held back on purpose, or failing, leaves the first cut-outs
//     to WebAssembly, which does not wait for it; the GPU's engine takes over once warm;
//   - a process that used the GPU engine exits 0 by itself.
// Without an adapter each test is skipped with one line naming the packages (webgpu-gate.ts).
import { join } from "node:path";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { PACKAGE_WASM_DIR } from "../../src/engine/assets/paths.ts";
import { deriveModel } from "../../src/engine/assets/derive.ts";
import { dequantiseToFloat } from "../../src/engine/assets/dequantise-float.ts";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { openEngine } from "../../src/engine/library/open-engine.ts";
import { handingOverToGpu } from "../../src/engine/library/gpu-handover.ts";
import type { PipelineJob, PipelineOk } from "../../src/engine/pipeline/pipeline.ts";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { maskDifference, writeTinyModel } from "../support/tiny-onnx.ts";
import { gpuTestIn } from "./webgpu-gate.ts";

const gpuTest = gpuTestIn("test/deno/gpu_engine_test.ts");
const SIZE = 64;

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

/** A folder with the tiny model's static int8 form and its two GPU forms, each in the manifest as the default's are. */
function tinyForms() {
  const tiny = writeTinyModel(SIZE, SIZE);
  const stat = deriveModel(tiny.model.bytes, { quantiseStatic: { keepFloat: [], ranges: { input: [-0.5, 0.5], h2: [0, 4] } } });
  const entry = (file: string, bytes: Uint8Array, extra: object = {}) => {
    writeFileSync(join(tiny.dir, file), bytes);
    return { ...tiny.model.entry, file, sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length, ...extra };
  };
  const models = {
    "tiny-static": entry("tiny-static.onnx", stat, { autoBackend: "cpu" }),
    "tiny-gpu": entry("tiny-gpu.onnx", dequantiseToFloat(stat).bytes, { gpuFormOf: "tiny-static", autoBackend: "any" }),
    "tiny-gpu-f16": entry("tiny-gpu-f16.onnx", dequantiseToFloat(stat, "float16").bytes, { gpuFormOf: "tiny-static", gpuActivations: "float16", autoBackend: "any" }),
  };
  writeFileSync(join(tiny.dir, "manifest.json"), JSON.stringify({ version: 1, models }));
  return { dir: tiny.dir, remove: tiny.remove };
}

/** Varied pictures of the model's size: gradients, turned and dimmed. */
const pictures = (): Uint8Array[] => {
  const base = new Uint8Array(SIZE * SIZE * 3).map((_, i) => ((i % 3 === 0 ? (i / 3) % SIZE : i % 3 === 1 ? Math.floor(i / 3 / SIZE) : (i / 3) ^ 7) * 4) & 255);
  return [base, base.map((v, i) => (i % 3 === 0 ? 255 - v : v)), base.slice().reverse(), base.map((v) => v >> 1)];
};

const photo = () => Deno.readFileSync(new URL("../fixtures/photos/rocket.jpg", import.meta.url));
const job = (): PipelineJob => ({ image: photo(), size: "preview", semitransparency: false });

async function alphaOf(png: Uint8Array): Promise<Uint8Array> {
  const decoded = await decodeImage(png);
  assert(decoded.ok, "the cut-out decodes");
  const { data } = decoded.image;
  return Uint8Array.from({ length: data.length / 4 }, (_, i) => data[i * 4 + 3]!);
}

gpuTest("a batch gives each picture its own mask, and float16 activations stay within a level or two of float32's", async () => {
  const forms = tinyForms();
  const open = async (model: string) => {
    const r = await resolveModel({ model, modelsDir: forms.dir });
    assert(r.ok, `resolves ${model}`);
    const { bindCard } = await import("../../src/engine/inference/graph-contract.ts");
    const { readGraphIo } = await import("../../src/engine/assets/onnx-io.ts");
    const bound = bindCard(r.entry, await readGraphIo(r.path));
    assert(bound.ok, `${model} fits its card`);
    return createMaskSession({ model: bound.model, modelPath: r.path, backend: model === "tiny-static" ? "wasm" : "webgpu", threads: 1, wasmDir: PACKAGE_WASM_DIR });
  };
  // One at a time: ORT refuses to create two WebGPU sessions at once.
  const f32 = await open("tiny-gpu");
  const f16 = await open("tiny-gpu-f16");
  try {
    assert(f32.maxBatch && f32.maxBatch > 1 && f32.runBatch, `a GPU form takes batches (maxBatch ${f32.maxBatch})`);
    const pics = pictures();
    const one = [];
    for (const p of pics) one.push(await f32.run(p));
    assert(maskDifference(one[0]!, one[1]!) > 10, "the pictures' masks differ");
    const batch = await f32.runBatch(pics);
    for (const [k, m] of batch.entries()) {
      const worst = maskDifference(one[k]!, m);
      assert(worst <= 1, `picture ${k} of the batch differs from its own run by ${worst} levels`);
    }
    const half = await f16.runBatch!(pics);
    for (const [k, m] of half.entries()) {
      const worst = maskDifference(one[k]!, m);
      console.log(`picture ${k}: float16 activations against float32: up to ${worst} levels`);
      assert(worst <= 2, `picture ${k}: float16 activations differ from float32's by ${worst} levels`);
    }
  } finally {
    await f32.dispose();
    await f16.dispose();
    forms.remove();
  }
});

gpuTest("pipeline workers share one GPU session thread, which counts its runs and pictures; each cut-out is WebAssembly's", async () => {
  const forms = tinyForms();
  const gpu = await openEngine({ model: "tiny-gpu", modelsDir: forms.dir, backend: "webgpu", workers: 3, threads: 1, gpuWorkers: 3 });
  const cpu = await openEngine({ model: "tiny-gpu", modelsDir: forms.dir, backend: "wasm", workers: 1, threads: 1 });
  try {
    await gpu.whenReady();
    const st = gpu.state();
    assert(st.backend === "webgpu" && st.poolSize === 3, `3 pipeline workers on webgpu, got ${st.poolSize} on ${st.backend}`);
    assert(typeof st.warmRunMs === "number" && st.warmRunMs > 0, `the GPU session warmed up before ready (${st.warmRunMs})`);
    const results = await Promise.all(Array.from({ length: 9 }, () => gpu.run(job())));
    const expected = await cpu.run(job());
    assert(expected.ok, "WebAssembly's cut-out");
    const want = await alphaOf(expected.png);
    for (const r of results) {
      assert(r.ok, "every cut-out on the GPU engine");
      const worst = maskDifference(want, await alphaOf(r.png));
      assert(worst <= 2, `a GPU cut-out's alpha differs from WebAssembly's by ${worst} levels`);
    }
    await new Promise((r) => setTimeout(r, 50));
    gpu.state(); // asks the session thread for its counts
    await new Promise((r) => setTimeout(r, 50));
    const b = gpu.state().gpuBatches;
    // Whether two asks meet in one run depends on timing here; test/inference/mask-batcher.test.ts holds the rule.
    assert(b && b.pictures === 9 && b.runs <= 9 && b.max === 4, `the session thread counted ${JSON.stringify(b)} for 9 jobs`);
    console.log(`GPU engine: ${b.pictures} pictures in ${b.runs} runs (batches up to ${b.max})`);
  } finally {
    await gpu.dispose();
    await cpu.dispose();
    forms.remove();
  }
});

/** The handover as openEngine builds it for auto on a GPU host, with `startGpu` in the test's hands. */
async function handover(dir: string, startGpu: () => Promise<Awaited<ReturnType<typeof openEngine>>>) {
  const onCpu = () => openEngine({ model: "tiny-static", modelsDir: dir, backend: "wasm", workers: 1, threads: 1 });
  return handingOverToGpu({ cpu: await onCpu(), startGpu, reopenCpu: onCpu });
}

gpuTest("auto's handover: with the GPU's start held back the first cut-outs come from WebAssembly without waiting; then the GPU's", async () => {
  const forms = tinyForms();
  // The GPU's start waits on a gate this test opens only after the first cut-out is done:
  // had that cut-out waited for the GPU it would never finish (the test's timeout), however
  // slow the machine.
  let openGate!: () => void;
  const gate = new Promise<void>((r) => (openGate = r));
  const engine = await handover(forms.dir, async () => {
    await gate;
    return openEngine({ model: "tiny-gpu", modelsDir: forms.dir, backend: "webgpu", workers: 2, threads: 1, gpuWorkers: 2 });
  });
  try {
    await engine.whenReady();
    // PD_TEST_STALL_MS holds the test up here, as a loaded machine may: nothing below may depend on it.
    await new Promise((r) => setTimeout(r, Number(Deno.env.get("PD_TEST_STALL_MS") ?? 0)));
    const first = (await engine.run(job())) as PipelineOk;
    assert(first.ok && first.model === "tiny-static", `the first cut-out came from ${first.model}`);
    assert(engine.state().gpuPhase === "starting", `gpu ${engine.state().gpuPhase} while its start is held back`);
    openGate();
    await engine.settled();
    assert(engine.state().gpuPhase === "running", `after the start: ${engine.state().gpuPhase} (${engine.state().gpuFallback})`);
    const later = (await engine.run(job())) as PipelineOk;
    assert(later.ok && later.model === "tiny-gpu", `after the GPU is warm the cut-out came from ${later.model}`);
    assert(engine.state().backend === "webgpu", `state says ${engine.state().backend}`);
    // The static int8 model rounds its activations to 8 bits, the GPU form does not: a pixel
    // near the cut-out's threshold may fall either side, but no more than a few.
    const [a, b] = [await alphaOf(first.png), await alphaOf(later.png)];
    const off = a.filter((v, i) => Math.abs(v - b[i]!) > 8).length / a.length;
    assert(off < 0.05, `WebAssembly's (static int8) and the GPU form's cut-outs differ at ${(off * 100).toFixed(1)} % of pixels`);
  } finally {
    await engine.dispose();
    forms.remove();
  }
});

gpuTest("auto's handover: a GPU start that fails leaves every cut-out to WebAssembly, and the state says why", async () => {
  const forms = tinyForms();
  // A session whose model file is missing on the GPU side fails as it starts.
  const engine = await handover(forms.dir, () => openEngine({ model: join(forms.dir, "missing.onnx"), card: "isnet", backend: "webgpu", workers: 2, threads: 1 }));
  try {
    await engine.whenReady();
    const first = (await engine.run(job())) as PipelineOk;
    assert(first.ok && first.model === "tiny-static", `the first cut-out came from ${first.model}`);
    await engine.settled();
    const st = engine.state();
    assert(st.gpuPhase === "gave-way" && st.ready && !st.failed, `gave way, ready, not failed: ${JSON.stringify(st)}`);
    assert(/missing/.test(st.gpuFallback ?? ""), `the reason names the cause: ${st.gpuFallback}`);
    const again = (await engine.run(job())) as PipelineOk;
    assert(again.ok && again.model === "tiny-static", `after giving way the cut-out came from ${again.model}`);
  } finally {
    await engine.dispose();
    forms.remove();
  }
});

gpuTest("a process that used the GPU engine exits 0 by itself, three times in a row", async () => {
  const forms = tinyForms();
  try {
    for (let i = 0; i < 3; i++) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL("./fixtures/gpu-exit-child.ts", import.meta.url).pathname, forms.dir, "tiny-gpu", new URL("../fixtures/photos/rocket.jpg", import.meta.url).pathname],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = new TextDecoder().decode(out.stdout);
      assert(out.success && out.code === 0 && out.signal === null, `run ${i}: exit ${out.code}, signal ${out.signal}: ${new TextDecoder().decode(out.stderr).slice(-500)}`);
      assert(said.includes('"backend":"webgpu"'), `run ${i}: ${said}`);
    }
  } finally {
    forms.remove();
  }
});
