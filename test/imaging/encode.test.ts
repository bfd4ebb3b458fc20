import { test } from "node:test";
import assert from "node:assert/strict";
import { encodePng } from "../../src/engine/imaging/encode.ts";
import { decodeImage } from "../../src/engine/imaging/decode.ts";
import { readImageHeader } from "../../src/engine/imaging/header.ts";
import type { RGBA } from "../../src/engine/imaging/types.ts";
import { fixture, seededRandom } from "./helpers.ts";

function noise(width: number, height: number, seed: number): RGBA {
  const random = seededRandom(seed);
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(random() * 256);
  return { width, height, data };
}

test("PNG round trip is lossless, alpha included", async () => {
  for (const [w, h] of [[1, 1], [3, 2], [97, 61]]) {
    const img = noise(w, h, w * 1000 + h);
    const png = await encodePng(img);
    const back = await decodeImage(png);
    assert.ok(back.ok, !back.ok ? back.title : "");
    assert.deepEqual([back.image.width, back.image.height], [w, h]);
    assert.deepEqual(back.image.data, img.data);
  }
});

test("output is always 8-bit RGBA (colour type 6), even for an opaque grey image", async () => {
  const grey: RGBA = { width: 4, height: 4, data: new Uint8ClampedArray(64).fill(255) };
  const png = await encodePng(grey);
  const h = readImageHeader(png);
  assert.ok(h.ok && h.format === "png" && h.width === 4 && h.height === 4);
  assert.equal(png[24], 8, "bit depth");
  assert.equal(png[25], 6, "colour type RGBA");
});

test("a decoded photo survives encode and decode unchanged", async () => {
  const photo = await decodeImage(fixture("images/png-rgba.png"));
  assert.ok(photo.ok);
  const back = await decodeImage(await encodePng(photo.image));
  assert.ok(back.ok);
  assert.deepEqual(back.image.data, photo.image.data);
});

test("pixel data of the wrong length is a programming error", async () => {
  await assert.rejects(encodePng({ width: 2, height: 2, data: new Uint8ClampedArray(15) }), RangeError);
  await assert.rejects(encodePng({ width: 0, height: 2, data: new Uint8ClampedArray(0) }), RangeError);
});
