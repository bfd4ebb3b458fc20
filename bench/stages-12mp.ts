// The 12 MP path stage by stage, in one process, for iterating on one stage at a time.
//
// First each stage alone on one thread: the decode (full, and at the scales the pipeline
// uses: the model's input and a preview from 3/8, a preview's own need alone from 2/8),
// the model-input resize (from the full decode and from the 3/8 one), the preview resize,
// mask upscale, foreground estimation and compose, encode. The mask is the real model's
// (native backend if present, else WASM), made once.
//
// Then how the banded stages scale with threads (--threads, default 1 and every core):
// each stage through RowBands with that many threads in all (the worker's own and
// helpers, src/engine/pipeline/pipeline-bands.ts), so each row is one stage's wall time
// at that thread count, and the speed-up against one thread.
//
//   npm run bench:stages -- [--runs 5] [--threads 1,2,4]
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { benchInputs } from "./inputs.ts";
import { medianMs, row, loadNote } from "./imaging-timing.ts";
import { decodeImage, applyOrientation, resizeToRGB, resizeRGBA, resizeMask, composeCutout, composeCutoutInPlace, foregroundBox, encodePng, outputSize } from "../src/engine/imaging/index.ts";
import { estimateForegroundInPlace, foregroundGrid } from "../src/engine/imaging/foreground.ts";
import { modelInputInBands, resizeImageInBands, shareBytes, shareImage } from "../src/engine/imaging/cutout-bands.ts";
import { encodeRgbaPng } from "../src/engine/imaging/png-rgba.ts";
import { inlineBands, type RowBands } from "../src/engine/imaging/row-bands.ts";
import { startThreadBands } from "../src/engine/pipeline/pipeline-bands.ts";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { createMaskSession } from "../src/engine/inference/session.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import type { RGBA } from "../src/engine/imaging/types.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const runs = Number(arg("runs", "5"));
const threadCounts = arg("threads", [...new Set([1, availableParallelism()])].join(",")).split(",").map(Number);
const root = fileURLToPath(new URL("../", import.meta.url));

const [input] = await benchInputs();
console.log(`stages-12mp: ${input!.width} x ${input!.height} JPEG, ${(input!.bytes.length / 1e6).toFixed(1)} MB; ${loadNote()}`);

const decoded = await decodeImage(input!.bytes);
if (!decoded.ok) throw new Error(decoded.title);
const img = applyOrientation(decoded.image, decoded.header.orientation);
const resolved = await resolveModel({ model: DEFAULT_MODEL, modelsDir: `${root}models` });
if (!resolved.ok) throw new Error(resolved.title);
const session = await createMaskSession({ model: resolved.entry, modelPath: resolved.path, backend: "native", threads: 2, wasmDir: `${root}wasm` }).catch(() =>
  createMaskSession({ model: resolved.entry, modelPath: resolved.path, backend: "wasm", threads: 2, wasmDir: `${root}wasm` }),
);
const { width: mw, height: mh } = session.inputSize;
const mask = await session.run(resizeToRGB(img, mw, mh));
await session.dispose();
const alpha = resizeMask(mask, mw, mh, img.width, img.height);
const cut = composeCutout(img, alpha, { semitransparency: true });
const preview = outputSize(img.width, img.height, "preview");
const reduced = await decodeImage(input!.bytes, { atLeast: session.inputSize });
if (!reduced.ok) throw new Error(reduced.title);
const { image: reducedImage, eighths } = reduced;

console.log("");
console.log("## Each stage on one thread");
console.log(row("decode, full (libjpeg-turbo)", await medianMs(() => decodeImage(input!.bytes), runs)));
console.log(row(`decode for the model (${reduced.eighths}/8: ${reduced.image.width} x ${reduced.image.height})`, await medianMs(() => decodeImage(input!.bytes, { atLeast: session.inputSize }), runs)));
console.log(row(`decode for a preview alone (${preview.width} x ${preview.height})`, await medianMs(() => decodeImage(input!.bytes, { atLeast: preview }), runs)));
console.log(row(`model input from the full decode`, await medianMs(() => resizeToRGB(img, mw, mh), runs)));
console.log(row(`model input from the ${reduced.eighths}/8 decode`, await medianMs(() => resizeToRGB(reduced.image, mw, mh), runs)));
console.log(row(`preview resize from the ${reduced.eighths}/8 decode`, await medianMs(() => resizeRGBA(reduced.image, preview.width, preview.height), runs)));
console.log(row("mask to 12 MP: resizeMask", await medianMs(() => resizeMask(mask, mw, mh, img.width, img.height), runs)));
console.log(row("copy 12 MP RGBA", await medianMs(() => new Uint8ClampedArray(img.data), runs)));
console.log(row("foreground estimation", await medianMs(() => estimateForegroundInPlace(new Uint8ClampedArray(img.data), alpha, img.width, img.height), runs)));
console.log(row("composeCutout (copy + estimation + alpha)", await medianMs(() => composeCutout(img, alpha, { semitransparency: true }), runs)));
console.log(
  row("composeCutoutInPlace", await medianMs(() => composeCutoutInPlace({ ...img, data: new Uint8ClampedArray(img.data) }, alpha.slice(), { semitransparency: true }), runs)),
);
console.log(row("foregroundBox", await medianMs(() => foregroundBox(alpha, img.width, img.height), runs)));
console.log(row("encodePng", await medianMs(() => encodePng(cut), runs)));
console.log(`PNG bytes: ${(await encodePng(cut)).length}`);

/** The banded stages, each a function of the bands it runs on (its own inputs made in their memory). */
function bandedStages(bands: RowBands): Array<[string, () => Promise<unknown>]> {
  bands.begin();
  const shared = shareImage({ ...img, data: img.data.slice() }, bands);
  const sharedReduced = shareImage({ ...reducedImage, data: reducedImage.data.slice() } as RGBA, bands);
  const sharedMask = shareBytes(mask, bands);
  const work = shareImage({ ...img, data: img.data.slice() }, bands);
  const sharedCut = shareImage({ ...cut, data: cut.data.slice() }, bands);
  const a = bands.bytes(img.width * img.height);
  const grid = foregroundGrid(img.width, img.height, (n) => bands.floats(n));
  const { width, height } = img;
  return [
    ["model input from the full decode", () => modelInputInBands(shared, mw, mh, bands, true)],
    [`model input from the ${eighths}/8 decode`, () => modelInputInBands(sharedReduced, mw, mh, bands, true)],
    ["preview resize (from the full decode)", () => resizeImageInBands(shared, preview.width, preview.height, bands, true)],
    ["mask upscale + grid means", () => bands.run("maskAndMeans", { mask: sharedMask, mw, mh, rgba: work.data, alpha: a, width, height, grid }, height, grid.k)],
    [
      "foreground: grid solve",
      async () => {
        await bands.run("gridShared", { grid }, 3);
        await bands.run("gridChannels", { grid }, 3);
      },
    ],
    // The edge colours write the image: each run starts from the same pixels and mask.
    [
      "foreground colours + alpha (compose)",
      async () => {
        work.data.set(img.data);
        a.set(alpha);
        await bands.run("correctAndAlpha", { rgba: work.data, alpha: a, width, height, grid, hard: false }, height);
      },
    ],
    ["PNG encode (RGBA)", () => encodeRgbaPng(sharedCut, bands)],
  ];
}

console.log("");
console.log("## The banded stages by threads (wall ms, median, and its speed-up against 1 thread; CPU ms of all threads, median)");
console.log("Each round runs every stage at every thread count in turn, so load that comes and goes falls on all of them.");
const shapes: Array<{ threads: number; bands: RowBands; stages: Array<[string, () => Promise<unknown>]>; ms: number[][]; cpu: number[][] }> = [];
for (const t of threadCounts) {
  const bands = t === 1 ? inlineBands : await startThreadBands(t - 1);
  if (!bands) throw new Error(`${t - 1} band helpers did not start`);
  if (bands.parts !== t) console.log(`(asked for ${t} threads, got ${bands.parts}: capped by the ${availableParallelism()} cores)`);
  const stages = bandedStages(bands);
  shapes.push({ threads: bands.parts, bands, stages, ms: stages.map(() => []), cpu: stages.map(() => []) });
}
for (let round = 0; round <= runs; round++) {
  for (const shape of shapes) {
    for (const [k, [, run]] of shape.stages.entries()) {
      const t = performance.now();
      const c = process.cpuUsage(); // every thread of the process: the helpers' share too
      await run();
      const used = process.cpuUsage(c);
      if (round === 0) continue; // round 0 warms up
      shape.ms[k]!.push(performance.now() - t);
      shape.cpu[k]!.push((used.user + used.system) / 1000);
    }
  }
}
for (const { bands } of shapes) if ("dispose" in bands) await (bands as { dispose(): Promise<void> }).dispose();
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
console.log(`| stage | ${shapes.map(({ threads }) => `${threads} thread${threads === 1 ? "" : "s"}`).join(" | ")} |`);
console.log(`|---|${shapes.map(() => "---:").join("|")}|`);
for (const [k, [name]] of shapes[0]!.stages.entries()) {
  const one = med(shapes[0]!.ms[k]!);
  const cell = (sh: (typeof shapes)[number], i: number) => {
    const wall = med(sh.ms[k]!);
    return `${wall.toFixed(0)}${i === 0 ? "" : ` (${(one / wall).toFixed(2)} ×)`}, cpu ${med(sh.cpu[k]!).toFixed(0)}`;
  };
  console.log(`| ${name} | ${shapes.map(cell).join(" | ")} |`);
}
console.log(`\n${loadNote()}`);
