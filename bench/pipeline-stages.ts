// The pipeline's own stages on the 12 MP input without the model's time: runPipeline with
// a session that answers at once with the real model's mask of this image (made once at
// the start). In-process and single-threaded, so the numbers move much less with other
// load than npm run bench's; used to compare a change's before and after in one sitting
// (run it from each checkout in turn). Prints medians of the stage timings, ms.
//
//   node --import tsx bench/pipeline-stages.ts [--runs 7] [--size full|preview]
import { fileURLToPath } from "node:url";
import { benchInputs } from "./inputs.ts";
import { loadNote } from "./imaging-timing.ts";
import { decodeImage, applyOrientation, resizeToRGB } from "../src/imaging/index.ts";
import { resolveModel } from "../src/inference/manifest.ts";
import { createMaskSession, type MaskSession } from "../src/inference/session.ts";
import { runPipeline } from "../src/product/pipeline.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const runs = Number(arg("runs", "7"));
const size = arg("size", "full") as "full" | "preview";
const root = fileURLToPath(new URL("../", import.meta.url));

const [input] = await benchInputs();
const decoded = await decodeImage(input.bytes);
if (!decoded.ok) throw new Error(decoded.title);
const resolved = await resolveModel({ model: "small", modelsDir: `${root}models` });
if (!resolved.ok) throw new Error(resolved.title);
const opts = { model: resolved.entry, modelPath: resolved.path, threads: 2, wasmDir: `${root}wasm` };
const real = await createMaskSession({ ...opts, backend: "native" }).catch(() => createMaskSession({ ...opts, backend: "wasm" }));
const upright = applyOrientation(decoded.image, decoded.header.orientation);
const mask = await real.run(resizeToRGB(upright, real.inputSize.width, real.inputSize.height));
await real.dispose();

const replay: MaskSession = { backend: "stub", inputSize: real.inputSize, run: async () => mask.slice(), dispose: async () => {} };
const all: Record<string, number[]> = {};
for (let i = 0; i <= runs; i++) {
  const r = await runPipeline({ image: input.bytes, size, semitransparency: true }, replay);
  if (!r.ok) throw new Error(r.title);
  if (i === 0) continue; // warms this input's code paths
  for (const [k, v] of Object.entries({ ...r.timings, processingMs: r.processingMs, pngBytes: r.png.length })) (all[k] ??= []).push(v);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`pipeline-stages (${size}, the model replaced by its saved mask): ${loadNote()}`);
console.log(Object.entries(all).map(([k, v]) => `${k} ${Math.round(median(v))}`).join(", "));
