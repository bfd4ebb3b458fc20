// The GPU forms' masks against the default model's on WebAssembly, with the real weights, on
// this machine's WebGPU adapter (Mesa's lavapipe does it without a GPU, slowly): for each
// fixture photo at a model input of `side`², each form's mean and largest difference in
// levels of 255, pixels off by more than 8, and the IoU of the masks cut at 128; and the
// float16 form against the float32 one. The stated tolerance (docs/MODEL.md): mean ≤ 1.5
// levels and IoU ≥ 0.97 against int8-static on the CPU.
//   deno run -A bench/gpu-form-tolerance.ts [side=512]
import { readFileSync } from "node:fs";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../src/engine/assets/paths.ts";
import { readGraphIo } from "../src/engine/assets/onnx-io.ts";
import { locateAssets } from "../src/engine/assets/locate.ts";
import { bindCard } from "../src/engine/inference/graph-contract.ts";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { createMaskSession, type MaskSession } from "../src/engine/inference/session.ts";
import { decodeImage, resizeToRGB } from "../src/engine/imaging/index.ts";

const side = Number(process.argv[2] ?? 512);
const photos = ["astronaut.png", "chelsea.png", "rocket.jpg"];

async function open(model: string, backend: "wasm" | "webgpu"): Promise<MaskSession> {
  await locateAssets({ model });
  const r = await resolveModel({ model, modelsDir: PACKAGE_MODELS_DIR });
  if (!r.ok) throw new Error(r.title);
  const bound = bindCard(r.entry, await readGraphIo(r.path));
  if (!bound.ok) throw new Error(bound.problems.join("; "));
  return createMaskSession({ model: bound.model, modelPath: r.path, backend, threads: 2, wasmDir: PACKAGE_WASM_DIR });
}

function compare(a: Uint8Array, b: Uint8Array) {
  let sum = 0;
  let max = 0;
  let off = 0;
  let inter = 0;
  let union = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    max = Math.max(max, d);
    if (d > 8) off++;
    const [x, y] = [a[i]! >= 128, b[i]! >= 128];
    if (x && y) inter++;
    if (x || y) union++;
  }
  return `${(sum / a.length).toFixed(2)} | ${max} | ${((off / a.length) * 100).toFixed(2)} % | ${(union ? inter / union : 1).toFixed(4)}`;
}

const size = { width: side, height: side };
const inputs = [];
for (const name of photos) {
  const decoded = await decodeImage(new Uint8Array(readFileSync(new URL(`../test/fixtures/photos/${name}`, import.meta.url))));
  if (!decoded.ok) throw new Error(decoded.title);
  inputs.push({ name, rgb: resizeToRGB(decoded.image, side, side) });
}
const masks: Record<string, Uint8Array[]> = {};
for (const [model, backend] of [["int8-static", "wasm"], ["int8-static-gpu", "webgpu"], ["int8-static-gpu-f16", "webgpu"]] as const) {
  const session = await open(model, backend);
  masks[model] = [];
  for (const input of inputs) {
    const t = performance.now();
    masks[model].push(await session.run(input.rgb, size));
    console.error(`${model} on ${session.backend}, ${input.name}: ${Math.round(performance.now() - t)} ms`);
  }
  await session.dispose();
}
console.log(`\nmasks at ${side}² (adapter: ${(await navigator.gpu.requestAdapter())?.info.description}):\n`);
console.log("| photo | form | against | mean levels | largest | pixels off > 8 | IoU at 128 |");
console.log("|---|---|---|---|---|---|---|");
for (const [k, input] of inputs.entries()) {
  console.log(`| ${input.name} | int8-static-gpu | int8-static (CPU) | ${compare(masks["int8-static"]![k]!, masks["int8-static-gpu"]![k]!)} |`);
  console.log(`| ${input.name} | int8-static-gpu-f16 | int8-static (CPU) | ${compare(masks["int8-static"]![k]!, masks["int8-static-gpu-f16"]![k]!)} |`);
  console.log(`| ${input.name} | int8-static-gpu-f16 | int8-static-gpu | ${compare(masks["int8-static-gpu"]![k]!, masks["int8-static-gpu-f16"]![k]!)} |`);
}
process.exit(0);
