// Times one model session on this runtime, to compare Deno with Node on the same machine
// at the same moment: session start, then `runs` inferences on a blank 1024² input.
//   ./node_modules/.bin/deno run -A scripts/deno-inference-time.ts [backend] [threads] [runs] [model]
//   node --import tsx scripts/deno-inference-time.ts [backend] [threads] [runs] [model]
// backend: wasm (default), webgpu or auto; model: a manifest name (default: the default
// model). Prints one JSON line.
import { loadavg } from "node:os";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { createMaskSession } from "../src/engine/inference/session.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../src/engine/assets/paths.ts";

const [backendArg = "wasm", threadsArg = "2", runsArg = "3", modelArg = DEFAULT_MODEL] = process.argv.slice(2);
const backend = backendArg as "wasm" | "webgpu" | "auto";
const runtime = "Deno" in globalThis ? "deno" : "node";

const model = await resolveModel({ model: modelArg, modelsDir: PACKAGE_MODELS_DIR });
if (!model.ok) throw new Error(model.title);
const load = loadavg()[0];
const t0 = performance.now();
const session = await createMaskSession({
  model: model.entry,
  modelPath: model.path,
  backend,
  threads: Number(threadsArg),
  wasmDir: PACKAGE_WASM_DIR,
});
const createMs = Math.round(performance.now() - t0);
// Progress on stderr, so a run stopped by a timeout still says how far it got.
console.error(`${modelArg} on ${session.backend}: session started in ${createMs} ms`);
const runMs: number[] = [];
const blank = new Uint8Array(session.inputSize.width * session.inputSize.height * 3);
for (let i = 0; i < Number(runsArg); i++) {
  const started = performance.now();
  await session.run(blank);
  runMs.push(Math.round(performance.now() - started));
  console.error(`${modelArg} on ${session.backend}: run ${i + 1} took ${runMs[i]} ms`);
}
await session.dispose();
console.log(JSON.stringify({ runtime, model: modelArg, backend: session.backend, threads: Number(threadsArg), createMs, runMs, loadAtStart: load }));
// ORT's own threads would keep the process alive.
process.exit(0);
