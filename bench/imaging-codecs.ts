// Decode and encode times for a 12 MP photo: the @jsquash (Squoosh WASM) codecs we
// use against imagescript, median of 5 runs after a warm-up.
// Run: node --import tsx bench/imaging-codecs.ts
// Needs /usr/bin/convert and cwebp to make the 4000 x 3000 inputs in a temp dir.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import imagescript from "imagescript";
import { decode as jsquashPngDecode, init as jsquashPngInit } from "@jsquash/png/decode.js";
import { createCodecs } from "../src/engine/imaging/codecs.ts";
import { encodePng } from "../src/engine/imaging/encode.ts";
import { compileWasm } from "../src/engine/imaging/wasm-loader.ts";
import type { RGBA } from "../src/engine/imaging/types.ts";
import { convert, loadNote, medianMs, row, scratchDir } from "./imaging-timing.ts";

const dir = scratchDir();
const photo = new URL("../test/fixtures/photos/rocket.jpg", import.meta.url).pathname;
const file = (name: string) => join(dir, name);
convert([photo, "-resize", "4000x3000!", "-quality", "90", file("12mp.jpg")]);
convert([file("12mp.jpg"), "-interlace", "Plane", file("12mp-progressive.jpg")]);
convert([file("12mp.jpg"), file("12mp.png")]);
execFileSync("cwebp", ["-quiet", "-q", "85", file("12mp.png"), "-o", file("12mp.webp")]);
const bytes = (name: string) => new Uint8Array(readFileSync(file(name)));
const jpeg = bytes("12mp.jpg");
const progressive = bytes("12mp-progressive.jpg");
const png = bytes("12mp.png");
const webp = bytes("12mp.webp");

const codecs = createCodecs();
const mustDecode = async (p: Promise<{ ok: boolean }>) => {
  const r = await p;
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r;
};
const decodedJpeg = (await mustDecode(codecs.decodeJpeg(jpeg))) as { ok: true; image: RGBA };
const { Image } = imagescript;
await jsquashPngInit(await compileWasm("@jsquash/png/codec/pkg/squoosh_png_bg.wasm"));

console.log(`12 MP (4000 x 3000) inputs: JPEG ${jpeg.length} B, PNG ${png.length} B, WebP ${webp.length} B; ${loadNote()}`);
console.log("-- decode");
console.log(row("JPEG baseline    @jsquash/jpeg (ours)", await medianMs(() => mustDecode(codecs.decodeJpeg(jpeg)))));
console.log(row("JPEG baseline    imagescript", await medianMs(() => Image.decode(jpeg))));
console.log(row("JPEG progressive @jsquash/jpeg (ours)", await medianMs(() => mustDecode(codecs.decodeJpeg(progressive)))));
console.log(row("JPEG progressive imagescript", await medianMs(() => Image.decode(progressive))));
console.log(row("PNG              imagescript wasm (ours)", await medianMs(() => mustDecode(codecs.decodePng(png)))));
console.log(row("PNG              @jsquash/png", await medianMs(() => jsquashPngDecode(png.slice().buffer))));
console.log(row("WebP lossy       @jsquash/webp (ours)", await medianMs(() => mustDecode(codecs.decodeWebp(webp)))));
console.log("-- encode (8-bit RGBA PNG)");
const rgba = decodedJpeg.image;
let oursSize = 0;
let imagescriptSize = 0;
console.log(row("png-rgba.ts, one thread (ours)", await medianMs(async () => (oursSize = (await encodePng(rgba)).length))));
const im = new Image(rgba.width, rgba.height);
im.bitmap.set(rgba.data);
console.log(row("imagescript", await medianMs(async () => (imagescriptSize = (await im.encode()).length))));
console.log(`output size: ours ${oursSize} B, imagescript ${imagescriptSize} B`);
