// The planned WebGPU run (src/engine/inference/planned/) against onnxruntime-web's WebGPU
// provider, its reference, with the default model's GPU form on four fixture photos at a
// reduced input size (the graph takes multiples of 64; 64² keeps the provider's run to
// seconds on Mesa's software adapter): masks within half a level on average and 4 levels
// at worst, a run is one pass and one submit, and a graph with an operator the plan lacks
// goes to the provider. Without an adapter each test is skipped (webgpu-gate.ts).
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../../src/engine/assets/paths.ts";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import { bindCard } from "../../src/engine/inference/graph-contract.ts";
import { readGraphIo } from "../../src/engine/assets/onnx-io.ts";
import { createMaskSession, type MaskSession } from "../../src/engine/inference/session.ts";
import type { WebGpuRun } from "../../src/engine/inference/runner.ts";
import { plannedProgram } from "../../src/engine/inference/planned/planned-runner.ts";
import { decodeImage, resizeToRGB } from "../../src/engine/imaging/index.ts";
import { countWebGpuCalls } from "../../bench/webgpu-call-count.ts";
import { gpuTestIn } from "./webgpu-gate.ts";

const gpuTest = gpuTestIn("test/deno/planned_webgpu_test.ts");
const SIZE = 64;
const PHOTOS = ["astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg"];
/** The agreement asked of the planned run, in mask levels (0-255). */
const MEAN_LEVELS = 0.5;
const MAX_LEVELS = 4;

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

async function photos(): Promise<Uint8Array[]> {
  return Promise.all(
    PHOTOS.map(async (name) => {
      const decoded = await decodeImage(readFileSync(new URL(`../fixtures/photos/${name}`, import.meta.url)));
      assert(decoded.ok, `${name} decodes`);
      return resizeToRGB(decoded.image, SIZE, SIZE);
    }),
  );
}

/** The default model's GPU form, as a card of SIZE² (the manifest's own size is 1024²). */
async function gpuForm() {
  const r = await resolveModel({ model: "int8-static-gpu", modelsDir: PACKAGE_MODELS_DIR });
  assert(r.ok, "the GPU form resolves (npm ci assembles it)");
  const bound = bindCard(r.entry, await readGraphIo(r.path));
  assert(bound.ok, "the GPU form fits its card");
  return { model: { ...bound.model, inputSize: [SIZE, SIZE] as [number, number] }, path: r.path };
}

const open = async (webgpuRun: WebGpuRun): Promise<MaskSession> => {
  const { model, path } = await gpuForm();
  return createMaskSession({ model, modelPath: path, backend: "webgpu", threads: 1, wasmDir: PACKAGE_WASM_DIR, webgpuRun });
};

gpuTest("the planned run's masks are onnxruntime-web's WebGPU masks on four photos (mean ≤ 0.5, max ≤ 4 levels); a run is one pass and one submit", async () => {
  const pics = await photos();
  const reference: Uint8Array[] = [];
  // One WebGPU session of ORT's at a time, and it gone before the planned one starts.
  const provider = await open("provider");
  try {
    assert(provider.webgpuRun === "provider", `asked for the provider, ran ${provider.webgpuRun}`);
    for (const p of pics) reference.push(await provider.run(p));
  } finally {
    await provider.dispose();
  }
  const planned = await open("planned");
  const calls = countWebGpuCalls();
  try {
    assert(planned.webgpuRun === "planned", `the GPU form is planned whole, ran ${planned.webgpuRun}`);
    for (const [k, p] of pics.entries()) {
      calls.reset();
      const mask = await planned.run(p);
      const counts = calls.counts();
      const n = (key: string) => counts.get(key)?.calls ?? 0;
      assert(n("Queue.submit") === 1 && n("CommandEncoder.beginComputePass") === 1 && n("Device.createCommandEncoder") === 1, `a run is one encoder, one pass, one submit: ${JSON.stringify([...counts])}`);
      assert(n("Device.createBindGroup") === 0 && n("Device.createBuffer") === 0 && n("Queue.writeBuffer") === 1, `a run makes nothing and writes only its input: ${JSON.stringify([...counts])}`);
      let sum = 0;
      let worst = 0;
      for (let i = 0; i < mask.length; i++) {
        const d = Math.abs(mask[i]! - reference[k]![i]!);
        sum += d;
        worst = Math.max(worst, d);
      }
      const mean = sum / mask.length;
      const spread = Math.max(...reference[k]!) - Math.min(...reference[k]!);
      console.log(`${PHOTOS[k]}: planned against the provider: mean ${mean.toFixed(3)}, max ${worst} levels (mask spans ${spread} levels)`);
      assert(spread > 16, `${PHOTOS[k]}: the reference mask is not constant (spans ${spread} levels)`);
      assert(mean <= MEAN_LEVELS && worst <= MAX_LEVELS, `${PHOTOS[k]}: planned mask differs from the provider's by ${mean.toFixed(3)} on average, ${worst} at worst`);
    }
  } finally {
    calls.stop();
    await planned.dispose();
  }
});

gpuTest("a graph with an operator the plan lacks is refused with the operator named (and runs on the provider)", async () => {
  const r = await resolveModel({ model: "int8-static", modelsDir: PACKAGE_MODELS_DIR });
  assert(r.ok, "the static model resolves");
  const check = plannedProgram(new Uint8Array(readFileSync(join(r.path))), { ...r.entry, inputName: r.entry.inputName, outputName: r.entry.outputName });
  assert(!check.ok && /QuantizeLinear|DequantizeLinear/.test(check.reason), `the QDQ graph is not planned: ${check.ok ? "planned" : check.reason}`);
});
