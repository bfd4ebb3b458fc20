// The library through its public entry only ("pixeldrop", which resolves to the built
// dist/): the real model on a real photo; then, with a tiny model of IS-Net's shape passed
// by path (test/support/tiny-onnx.ts: what the engine does around the model does not
// depend on which model it is, and each IS-Net run costs seconds), every input kind,
// ImageError on junk, options errors, abort, the caller's buffer left whole, a process
// that exits without dispose, and the output options (checked pixel by pixel against the
// same remover's plain cut-out, which needs no real subject).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRemover, ImageError, InferenceError, type Remover } from "pixeldrop";
import { decodeImage, encodePng } from "../../src/engine/imaging/index.ts";
import { maskProblems, PHOTO_CASES } from "../support/photo-masks.ts";
import { writeTinyModel, type TinyModelDir } from "../support/tiny-onnx.ts";

const photo = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/${name}`, import.meta.url)));
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

let real: Remover;
let remover: Remover;
let tiny: TinyModelDir;
before(async () => {
  tiny = writeTinyModel();
  real = await createRemover({ backend: "wasm", threads: 2 });
  remover = await createRemover({ model: tiny.path, backend: "wasm", threads: 2 });
});
after(async () => {
  await real?.dispose();
  await remover?.dispose();
  tiny?.remove();
});

test("a real photo: subject opaque, background clear, sizes and box as documented", async () => {
  const c = PHOTO_CASES[0]!; // astronaut, 512 x 512
  const cut = await real.remove(photo(c.name));
  assert.deepEqual([...cut.png.subarray(0, 8)], PNG_SIGNATURE);
  assert.equal(cut.width, 512);
  assert.equal(cut.height, 512);
  const decoded = await decodeImage(cut.png);
  assert.ok(decoded.ok);
  assert.deepEqual(maskProblems(decoded.image, c), []);
  const f = cut.foreground;
  assert.ok(f.width > 0 && f.height > 0 && f.left + f.width <= cut.width && f.top + f.height <= cut.height, JSON.stringify(f));
  assert.ok(cut.processingMs > 0);
  assert.equal(real.backend, "wasm");
});

test("every input kind gives the same cut-out, and the caller's buffer stays whole", async () => {
  const bytes = photo("photos/rocket.jpg"); // a Uint8Array, as in the test above
  const copy = bytes.slice();
  const asBuffer = readFileSync(new URL("../fixtures/photos/rocket.jpg", import.meta.url)); // a Buffer, often a view of a shared pool
  const asArrayBuffer = bytes.slice().buffer;
  const asBlob = new Blob([bytes]);
  const outs = [];
  for (const input of [asBuffer, asArrayBuffer, asBlob]) outs.push(await remover.remove(input, { size: "preview" }));
  for (const out of outs.slice(1)) assert.deepEqual(out.png, outs[0]!.png);
  assert.ok(outs[0]!.width * outs[0]!.height <= 250_000, "preview is at most 0.25 MP");
  // Nothing was detached, emptied or changed.
  assert.deepEqual(new Uint8Array(asBuffer), copy);
  assert.equal(asArrayBuffer.byteLength, copy.byteLength);
  assert.equal(asBlob.size, copy.byteLength);
});

test("junk rejects with ImageError (the API's code and title) and the remover stays usable", async () => {
  const junk = new TextEncoder().encode("this is not an image");
  await assert.rejects(remover.remove(junk), (err: unknown) => {
    assert.ok(err instanceof ImageError);
    assert.equal(err.code, "invalid_parameter");
    assert.equal(err.title, "The file is not a JPEG, PNG or WebP image");
    return true;
  });
  await assert.rejects(remover.remove(new Uint8Array(0)), ImageError);
  // A PNG whose header claims more than 12 MP: refused from the header, nothing decoded.
  const huge = photo("photos/astronaut.png");
  new DataView(huge.buffer).setUint32(16, 5000);
  new DataView(huge.buffer).setUint32(20, 5000);
  await assert.rejects(remover.remove(huge), /limit is 12,000,000 pixels/);
  const cut = await remover.remove(photo("photos/chelsea.png"), { size: "preview", semitransparency: false });
  assert.ok(cut.width > 0);
});

test("bad options are RangeError / TypeError naming the option", async () => {
  await assert.rejects(remover.remove(photo("photos/chelsea.png"), { size: "huge" as never }), RangeError);
  await assert.rejects(remover.remove("photo.jpg" as never), TypeError);
  await assert.rejects(createRemover({ backend: "cuda" as never }), RangeError);
  await assert.rejects(createRemover({ workers: -1 }), RangeError);
  await assert.rejects(createRemover({ model: "large" }), (err: unknown) => err instanceof InferenceError && err.code === "model_unavailable");
});

test("abort: an aborted signal rejects at once; a queued job is withdrawn, the running one finishes", async () => {
  const image = photo("photos/chelsea.png");
  await assert.rejects(remover.remove(image, { signal: AbortSignal.abort() }), { name: "AbortError" });
  const controller = new AbortController();
  const first = remover.remove(image, { size: "preview" });
  const second = remover.remove(image, { size: "preview", signal: controller.signal });
  controller.abort();
  await assert.rejects(second, { name: "AbortError" });
  const done = await first;
  assert.ok(done.width > 0);
});

test("a process that never disposes its idle remover still exits by itself", () => {
  const script = fileURLToPath(new URL("./fixtures/no-dispose.mjs", import.meta.url));
  const r = spawnSync(process.execPath, [script, tiny.path], { encoding: "utf8", timeout: 180_000 });
  assert.equal(r.signal, null, `killed after 180 s: the idle pool kept the process alive\n${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /cut 451x300, not disposed/);
});

test("channels, bgColor and uncertainty, as the API's channels, bg_color and X-PD-Uncertainty", async () => {
  // Checked pixel by pixel against the plain cut-out of the same image: the alpha channel is
  // its alpha, and over a colour B each pixel is cut-out·a + B·(1 − a), opaque. Whatever the
  // mask, so the tiny model serves; an image of two flat halves gives it an edge.
  const image = await twoColourPng(96, 64);
  const plain = await decodeImage((await remover.remove(image)).png);
  assert.ok(plain.ok);
  const alpha = await remover.remove(image, { channels: "alpha" });
  assert.equal(alpha.png[25], 0, "greyscale PNG (IHDR colour type 0)");
  const grey = await decodeImage(alpha.png);
  assert.ok(grey.ok);
  const backdrop = [16, 224, 160];
  const over = await remover.remove(image, { bgColor: "#10e0a0" });
  const composed = await decodeImage(over.png);
  assert.ok(composed.ok);
  const cut = plain.image.data;
  const greyData = grey.image.data;
  const out = composed.image.data;
  let seeThrough = 0;
  for (let i = 0; i < 96 * 64; i++) {
    const a = cut[i * 4 + 3]!;
    assert.equal(greyData[i * 4], a, `pixel ${i}: the alpha channel is the cut-out's alpha`);
    if (a < 230) seeThrough++;
    assert.equal(out[i * 4 + 3], 255, "an opaque colour gives opaque output");
    for (let c = 0; c < 3; c++) {
      const want = (cut[i * 4 + c]! * a + backdrop[c]! * (255 - a)) / 255;
      const got = out[i * 4 + c]!;
      assert.ok(Math.abs(got - want) <= 1, `pixel ${i} channel ${c}: ${got}, expected ${want.toFixed(1)} (alpha ${a})`);
    }
  }
  assert.ok(seeThrough > 0, "the mask lets the backdrop through somewhere, so the check above sees it");
  assert.ok(over.uncertainty >= 0 && over.uncertainty <= 1);
  await assert.rejects(remover.remove(image, { bgColor: "not-a-colour" }), RangeError);
  await assert.rejects(remover.remove(image, { channels: "rgb" as never }), RangeError);
});

/** An opaque PNG whose left half is one colour and right half another. */
async function twoColourPng(width: number, height: number): Promise<Uint8Array> {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set([...(i % width < width / 2 ? [200, 40, 80] : [30, 160, 220]), 255], i * 4);
  return encodePng({ width, height, data });
}
