// Times one model session on this runtime, to compare Deno with Node on the same machine
// at the same moment: session start, then `runs` inferences on a blank 1024² input.
//   ./node_modules/.bin/deno run -A scripts/deno-inference-time.ts [backend] [threads] [runs] [model] [batch]
//   node --import tsx scripts/deno-inference-time.ts [backend] [threads] [runs] [model] [batch]
// backend: wasm (default), webgpu or auto; model: a manifest name (default: the default
// model); batch: pictures a run (a GPU form on WebGPU takes several; runMs is then a run's,
// perPictureMs a picture's). Prints one JSON line.
import { loadavg } from "node:os";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { bindCard } from "../src/engine/inference/graph-contract.ts";
import { readGraphIo } from "../src/engine/assets/onnx-io.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { createMaskSession } from "../src/engine/inference/session.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../src/engine/assets/paths.ts";

const [backendArg = "wasm", threadsArg = "2", runsArg = "3", modelArg = DEFAULT_MODEL, batchArg = "1"] = process.argv.slice(2);
const batch = Number(batchArg);
const backend = backendArg as "wasm" | "webgpu" | "auto";
const runtime = "Deno" in globalThis ? "deno" : "node";

const model = await resolveModel({ model: modelArg, modelsDir: PACKAGE_MODELS_DIR });
if (!model.ok) throw new Error(model.title);
const load = loadavg()[0];
const t0 = performance.now();
// Held against the graph as the engine does: a GPU form's named batch dim lets it take several pictures.
const bound = bindCard(model.entry, await readGraphIo(model.path));
if (!bound.ok) throw new Error(bound.problems.join("; "));
const session = await createMaskSession({
  model: bound.model,
  modelPath: model.path,
  backend,
  threads: Number(threadsArg),
  wasmDir: PACKAGE_WASM_DIR,
  ...(batch > 1 ? { maxBatch: batch } : {}),
});
if (batch > 1 && !session.runBatch) throw new Error(`${modelArg} on ${session.backend} takes one picture a run`);
const createMs = Math.round(performance.now() - t0);
// Progress on stderr, so a run stopped by a timeout still says how far it got.
console.error(`${modelArg} on ${session.backend}: session started in ${createMs} ms`);
const runMs: number[] = [];
const blank = new Uint8Array(session.inputSize.width * session.inputSize.height * 3);
for (let i = 0; i < Number(runsArg); i++) {
  const started = performance.now();
  if (batch > 1) await session.runBatch!(Array.from({ length: batch }, () => blank));
  else await session.run(blank);
  runMs.push(Math.round(performance.now() - started));
  console.error(`${modelArg} on ${session.backend}: run ${i + 1} took ${runMs[i]} ms`);
}
await session.dispose();
const later = runMs.slice(1).sort((a, b) => a - b);
const perPictureMs = later.length ? Math.round(later[Math.floor(later.length / 2)]! / batch) : undefined;
console.log(JSON.stringify({ runtime, model: modelArg, backend: session.backend, threads: Number(threadsArg), batch, createMs, runMs, perPictureMs, loadAtStart: load }));
// ORT's own threads would keep the process alive.
process.exit(0);
