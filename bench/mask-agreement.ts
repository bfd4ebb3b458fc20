// npm run bench:agreement: how much the mask moves when the model's input comes from a
// reduced-scale JPEG decode (what the pipeline does now: docs/BENCHMARKS.md, "Mask
// agreement") instead of a full decode. For each held photo, as a JPEG at its
// own size and upscaled to just under 12 MP (as bench/inputs.ts makes the bench's), each
// also with an EXIF turn (orientation 6, the sides swapped), and each tier: the pipeline
// runs with a session that records what it fed the model, and the same model runs on the
// input made from a full decode. Both masks are grown to the output's size and compared:
// IoU of alpha ≥ 128, mean and largest |Δ alpha|. Target: IoU ≥ 0.995.
//
// The control column is the model's own sensitivity to resampling: the same full decode
// area-averaged first to the reduced decode's size and then to the model's input, against
// the direct resize. Where the control is as far from 1 as the reduced decode, the mask
// moves with any change of resampling, not with the DCT scaling.
//
//   npm run bench:agreement -- [--model <manifest name>] [--threads 2] [--photos rocket.jpg,...]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Image } from "imagescript";
import { applyOrientation, decodeImage, outputSize, resizeMask, resizeRGBA, resizeToRGB, type RGBA } from "../src/engine/imaging/index.ts";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { createMaskSession, type MaskSession } from "../src/engine/inference/session.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { runPipeline } from "../src/engine/pipeline/pipeline.ts";
import { startThreadBands } from "../src/engine/pipeline/pipeline-bands.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const root = fileURLToPath(new URL("../", import.meta.url));
const PHOTO_DIRS = [join(root, "test/fixtures/photos"), "/work/shared/fixtures/photos"];
const only = arg("photos", "").split(",").filter(Boolean);

/** An APP1 EXIF segment holding only an orientation tag (little-endian TIFF, one IFD entry). */
function exifOrientation(o: number): Uint8Array {
  const tiff = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, o, 0, 0, 0, 0, 0, 0, 0];
  const body = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff];
  const length = body.length + 2;
  return Uint8Array.from([0xff, 0xe1, length >> 8, length & 0xff, ...body]);
}

/** `jpeg` with an EXIF orientation right after its SOI marker. */
function turned(jpeg: Uint8Array, o: number): Uint8Array {
  const exif = exifOrientation(o);
  const out = new Uint8Array(jpeg.length + exif.length);
  out.set(jpeg.subarray(0, 2));
  out.set(exif, 2);
  out.set(jpeg.subarray(2), 2 + exif.length);
  return out;
}

async function jpegOf(img: RGBA): Promise<Uint8Array> {
  const out = new Image(img.width, img.height);
  out.bitmap.set(img.data);
  return out.encodeJPEG(90);
}

/** The photo upscaled to just under 12 MP, its aspect kept. */
function near12mp(img: RGBA): RGBA {
  const s = Math.sqrt(11_990_000 / (img.width * img.height));
  return resizeRGBA(img, Math.floor(img.width * s), Math.floor(img.height * s));
}

function compare(a: Uint8Array, b: Uint8Array): { iou: number; meanAbs: number; maxAbs: number } {
  let inter = 0, union = 0, sum = 0, max = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! >= 128, y = b[i]! >= 128;
    if (x && y) inter++;
    if (x || y) union++;
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    if (d > max) max = d;
  }
  return { iou: union === 0 ? 1 : inter / union, meanAbs: sum / a.length / 255, maxAbs: max };
}

const resolved = await resolveModel({ model: arg("model", DEFAULT_MODEL), modelsDir: join(root, "models") });
if (!resolved.ok) throw new Error(resolved.title);
const session = await createMaskSession({ model: resolved.entry, modelPath: resolved.path, backend: "wasm", threads: Number(arg("threads", "2")), wasmDir: join(root, "wasm") });
const fed = session.inputSize;
const bands = await startThreadBands(1);
if (!bands) throw new Error("no band helper: the decode beside the model needs one");

console.log(`# npm run bench:agreement — ${new Date().toISOString()}; model ${resolved.name} (${fed.width} x ${fed.height}), load ${loadavg()[0]!.toFixed(2)}`);
console.log("");
console.log("| photo | JPEG | EXIF | tier | model input from | output | IoU (α ≥ 128) | mean abs Δα | max abs Δα | control: IoU of the full decode resized in two steps |");
console.log("|---|---|---|---|---|---|---:|---:|---:|---:|");
const seen = new Set<string>();
let worst = 1;
for (const dir of PHOTO_DIRS) {
  if (!existsSync(dir)) continue;
  for (const f of readdirSync(dir).sort()) {
    if (!/\.(png|jpe?g|webp)$/i.test(f) || seen.has(f) || (only.length && !only.includes(f))) continue;
    seen.add(f);
    const photo = await decodeImage(new Uint8Array(readFileSync(join(dir, f))));
    if (!photo.ok) throw new Error(`${f}: ${photo.title}`);
    for (const big of [false, true]) {
      const pixels = big ? near12mp(photo.image) : photo.image;
      const plain = await jpegOf(pixels);
      for (const orientation of [1, 6]) {
        const bytes = orientation === 1 ? plain : turned(plain, orientation);
        // The reference: the model's input from a full decode.
        const full = await decodeImage(bytes);
        if (!full.ok) throw new Error(full.title);
        const upright = applyOrientation(full.image, full.header.orientation);
        const reference = await session.run(resizeToRGB(upright, fed.width, fed.height), fed);
        for (const tier of ["preview", "full"] as const) {
          // The scale the pipeline decodes the model's source at (its plan, pipeline.ts): for the
          // model and a preview together, or for the model alone beside a full decode.
          const need = tier === "preview" ? maxSides(fed, outputSize(upright.width, upright.height, tier)) : fed;
          const probe = await decodeImage(bytes, { atLeast: need });
          if (!probe.ok) throw new Error(probe.title);
          const fedFrom = probe.eighths === 8 ? "full decode" : `${probe.eighths}/8 decode`;
          let got: Uint8Array | undefined;
          const recording: MaskSession = { ...session, run: async (rgb, size) => (got = await session.run(rgb, size)) };
          const r = await runPipeline({ image: bytes, size: tier, semitransparency: true, channels: "alpha", overlapDecode: true }, recording, bands);
          if (!r.ok || !got) throw new Error(`${f}: ${r.ok ? "no model run" : r.title}`);
          const grow = (m: Uint8Array) => resizeMask(m, fed.width, fed.height, r.width, r.height);
          const c = compare(grow(reference), grow(got));
          worst = Math.min(worst, c.iou);
          let control = "–";
          if (probe.eighths !== 8) {
            const reduced = applyOrientation(probe.image, probe.header.orientation);
            const twoSteps = resizeRGBA(upright, reduced.width, reduced.height);
            control = compare(grow(reference), grow(await session.run(resizeToRGB(twoSteps, fed.width, fed.height), fed))).iou.toFixed(4);
          }
          console.log(
            `| ${f} | ${pixels.width} x ${pixels.height} | ${orientation} | ${tier} | ${fedFrom} | ${r.width} x ${r.height} | ${c.iou.toFixed(4)} | ${c.meanAbs.toFixed(4)} | ${c.maxAbs} | ${control} |`,
          );
        }
      }
    }
  }
}
await bands.dispose();
await session.dispose();
console.log("");
console.log(`Lowest IoU ${worst.toFixed(4)} (target ≥ 0.995). Load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
if (worst < 0.995) process.exitCode = 1;

function maxSides(a: { width: number; height: number }, b: { width: number; height: number }) {
  return { width: Math.max(a.width, b.width), height: Math.max(a.height, b.height) };
}
