// The pipeline's own stages on the 12 MP input without the model's time: runPipeline with
// a session that answers at once with the real model's mask of this image (made once at
// the start). In-process and single-threaded, so the numbers move much less with other
// load than npm run bench's; used to compare a change's before and after in one sitting
// (run it from each checkout in turn). Prints medians of the stage timings, ms.
//
// --overlap: the full tier with the real model (WebAssembly, a thread per core) in the
// run, alternating the plain path with the full-size decode beside the model's run
// (PipelineJob.overlapDecode): whether that overlap pays when the model and the decode
// share the CPU's cores. The PNGs must be the same bytes in both shapes here too.
//
//   node --import tsx bench/pipeline-stages.ts [--runs 7] [--size full|preview] [--helpers 1] [--overlap]
import { fileURLToPath } from "node:url";
import { availableParallelism } from "node:os";
import { benchInputs } from "./inputs.ts";
import { loadNote } from "./imaging-timing.ts";
import { decodeImage, applyOrientation, resizeToRGB } from "../src/engine/imaging/index.ts";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { createMaskSession, type MaskSession } from "../src/engine/inference/session.ts";
import { runPipeline } from "../src/engine/pipeline/pipeline.ts";
import { startThreadBands } from "../src/engine/pipeline/pipeline-bands.ts";
import { inlineBands, type RowBands } from "../src/engine/imaging/row-bands.ts";
import { createHash } from "node:crypto";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { median } from "./median.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const runs = Number(arg("runs", "7"));
const overlap = process.argv.includes("--overlap");
const size = arg("size", "full") as "full" | "preview";
const root = fileURLToPath(new URL("../", import.meta.url));

const [input] = await benchInputs();
const decoded = await decodeImage(input.bytes);
if (!decoded.ok) throw new Error(decoded.title);
const resolved = await resolveModel({ model: DEFAULT_MODEL, modelsDir: `${root}models` });
if (!resolved.ok) throw new Error(resolved.title);
const opts = { model: resolved.entry, modelPath: resolved.path, threads: availableParallelism(), wasmDir: `${root}wasm` };
// --overlap measures WebAssembly, whose run shares the cores with the decode beside it.
const real = overlap ? await createMaskSession({ ...opts, backend: "wasm" }) : await createMaskSession({ ...opts, backend: "native" }).catch(() => createMaskSession({ ...opts, backend: "wasm" }));
const upright = applyOrientation(decoded.image, decoded.header.orientation);
const mask = await real.run(resizeToRGB(upright, real.inputSize.width, real.inputSize.height));
if (!overlap) await real.dispose();

const replay: MaskSession = { backend: "stub", inputSize: real.inputSize, run: async () => mask.slice(), dispose: async () => {} };
// Each round runs the pipeline with every band on this thread, then with `--helpers`
// helper threads (pipeline-bands.ts, as a pool worker does), alternating so both see the
// same machine; the PNGs must be the same bytes.
const helpers = Number(arg("helpers", "1"));
const threaded = await startThreadBands(helpers);
if (!threaded) throw new Error("band helpers did not start");
const withHelpers = `1 + ${helpers} helper${helpers === 1 ? "" : "s"}`;
const shapes: Array<[string, RowBands, boolean?]> = overlap
  ? [[`${withHelpers}, plain`, threaded, false], [`${withHelpers}, decode beside the model`, threaded, true]]
  : [["1 thread", inlineBands], [withHelpers, threaded]];
const session = overlap ? real : replay;
const all: Record<string, Record<string, number[]>> = {};
const digests = new Set<string>();
for (let i = 0; i <= runs; i++) {
  for (const [name, bands, overlapDecode] of shapes) {
    const r = await runPipeline({ image: input.bytes, size, semitransparency: true, overlapDecode }, session, bands);
    if (!r.ok) throw new Error(r.title);
    digests.add(createHash("sha256").update(r.png).digest("hex"));
    if (i === 0) continue; // warms this input's code paths
    const into = (all[name] ??= {});
    for (const [k, v] of Object.entries({ ...r.timings, processingMs: r.processingMs, pngBytes: r.png.length })) (into[k] ??= []).push(v);
  }
}
await threaded.dispose();
if (overlap) await real.dispose();
console.log(`pipeline-stages (${size}, ${overlap ? "the real model on WebAssembly" : "the model replaced by its saved mask"}, ${runs} runs): ${loadNote()}`);
for (const [name, stats] of Object.entries(all)) {
  console.log(`${name.padEnd(14)} ${Object.entries(stats).map(([k, v]) => `${k} ${Math.round(median(v))}`).join(", ")}`);
}
console.log(digests.size === 1 ? "PNG bytes identical across shapes" : `PNG bytes DIFFER across shapes (${digests.size} digests)`);
if (digests.size !== 1) process.exitCode = 1;
