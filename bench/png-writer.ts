// Our RGBA PNG writer (src/engine/imaging/png-rgba.ts) against the Squoosh encoder it replaced
// (@jsquash/png, kept as a dev-time reference): time on one thread and file size, on a
// 12 MP cut-out like the pipeline's (the benchmark's JPEG with a soft synthetic mask:
// transparent background, a soft edge, faint noise), the same photo opaque, and our
// test photos. The bound: files within 1.10 x of the old size.
//   node --import tsx bench/png-writer.ts [--runs 5]
import { readFileSync } from "node:fs";
import encodeSquoosh, { init as initSquoosh } from "@jsquash/png/encode.js";
import { decodeImage } from "../src/engine/imaging/decode.ts";
import { encodePng } from "../src/engine/imaging/encode.ts";
import { compileWasm } from "../src/engine/imaging/wasm-loader.ts";
import { applyMaskAlpha } from "../src/engine/imaging/compose.ts";
import type { RGBA } from "../src/engine/imaging/types.ts";
import { benchInputs } from "./inputs.ts";
import { loadNote, medianMs } from "./imaging-timing.ts";

const i = process.argv.indexOf("--runs");
const runs = i >= 0 ? Number(process.argv[i + 1]) : 5;
await initSquoosh(await compileWasm("@jsquash/png/codec/pkg/squoosh_png_bg.wasm"));

async function decoded(bytes: Uint8Array): Promise<RGBA> {
  const r = await decodeImage(bytes);
  if (!r.ok) throw new Error(r.title);
  return r.image;
}

/** The photo as a cut-out: an ellipse of subject, a 60 px soft edge, faint noise around. */
function cutout(photo: RGBA): RGBA {
  const { width, height } = photo;
  const data = new Uint8ClampedArray(photo.data);
  const mask = new Uint8Array(width * height);
  let seed = 7;
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const d = Math.hypot((x - width / 2) / (width * 0.3), (y - height * 0.6) / (height * 0.35)) - 1; // < 0 inside
    const edge = d * Math.min(width, height) * 0.3; // about pixels from the outline
    seed = (seed * 1664525 + 1013904223) >>> 0;
    mask[y * width + x] = edge < -30 ? 255 : edge < 30 ? Math.round(255 * (30 - edge) / 60) : seed >>> 29 === 0 ? 3 : 0;
  }
  applyMaskAlpha(data, mask, false, 0, width * height);
  return { width, height, data };
}

const [input] = await benchInputs();
const photo = await decoded(input.bytes);
const images: [string, RGBA][] = [
  [`12 MP cut-out (${photo.width} x ${photo.height})`, cutout(photo)],
  ["12 MP photo, opaque", photo],
];
for (const name of ["chelsea.png", "rocket.jpg", "astronaut.png"]) {
  images.push([name, await decoded(new Uint8Array(readFileSync(new URL(`../test/fixtures/photos/${name}`, import.meta.url))))]);
}

console.log(`png-writer: ${runs} runs, medians, one thread; ${loadNote()}`);
console.log("| image | ours ms | Squoosh ms | ours bytes | Squoosh bytes | size ratio |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const [name, img] of images) {
  const ours = (await encodePng(img)).length;
  const theirs = (await encodeSquoosh({ width: img.width, height: img.height, data: img.data, colorSpace: "srgb" } as ImageData)).byteLength;
  const oursMs = await medianMs(() => encodePng(img), runs);
  const theirsMs = await medianMs(() => encodeSquoosh({ width: img.width, height: img.height, data: img.data, colorSpace: "srgb" } as ImageData), runs);
  console.log(`| ${name} | ${Math.round(oursMs.median)} | ${Math.round(theirsMs.median)} | ${ours.toLocaleString("en")} | ${theirs.toLocaleString("en")} | ${(ours / theirs).toFixed(3)} |`);
}
