// The 12 MP path stage by stage, in one process, for iterating on one stage at a time:
// decode, model-input resize, mask resize, foreground estimation and compose, encode.
// The mask is the real model's (native backend if present, else WASM), made once.
//
//   node --import tsx bench/stages-12mp.ts [--runs 5]
import { benchInputs } from "./inputs.ts";
import { medianMs, row, loadNote } from "./imaging-timing.ts";
import {
  decodeImage,
  applyOrientation,
  resizeToRGB,
  resizeMask,
  composeCutout,
  composeCutoutInPlace,
  foregroundBox,
  encodePng,
} from "../src/engine/imaging/index.ts";
import { estimateForegroundInPlace } from "../src/engine/imaging/foreground.ts";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { createMaskSession } from "../src/engine/inference/session.ts";
import { fileURLToPath } from "node:url";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";

const i = process.argv.indexOf("--runs");
const runs = i >= 0 ? Number(process.argv[i + 1]) : 5;
const root = fileURLToPath(new URL("../", import.meta.url));

const [input] = await benchInputs();
console.log(`stages-12mp: ${input.width} x ${input.height} JPEG, ${(input.bytes.length / 1e6).toFixed(1)} MB; ${loadNote()}`);

const decoded = await decodeImage(input.bytes);
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

console.log(row("decode (mozjpeg)", await medianMs(() => decodeImage(input.bytes), runs)));
console.log(row("model input: resizeToRGB to 1024²", await medianMs(() => resizeToRGB(img, mw, mh), runs)));
console.log(row("mask to 12 MP: resizeMask", await medianMs(() => resizeMask(mask, mw, mh, img.width, img.height), runs)));
console.log(row("copy 12 MP RGBA", await medianMs(() => new Uint8ClampedArray(img.data), runs)));
console.log(
  row("foreground estimation", await medianMs(() => estimateForegroundInPlace(new Uint8ClampedArray(img.data), alpha, img.width, img.height), runs)),
);
console.log(row("composeCutout (copy + estimation + alpha)", await medianMs(() => composeCutout(img, alpha, { semitransparency: true }), runs)));
console.log(
  row("composeCutoutInPlace (one thread; the pipeline runs it in row bands)", await medianMs(() => composeCutoutInPlace({ ...img, data: new Uint8ClampedArray(img.data) }, alpha.slice(), { semitransparency: true }), runs)),
);
console.log(row("foregroundBox", await medianMs(() => foregroundBox(alpha, img.width, img.height), runs)));
console.log(row("encodePng", await medianMs(() => encodePng(cut), runs)));
console.log(`PNG bytes: ${(await encodePng(cut)).length}`);
