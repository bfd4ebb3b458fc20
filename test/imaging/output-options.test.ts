// The imaging parts behind channels, bg_color and X-PD-Uncertainty, on
// their own: colour parsing, "over" compositing, the greyscale PNG writer read back by
// our decoder, and the uncertainty measure's edges.
import { test } from "node:test";
import assert from "node:assert/strict";
import { composeOverColour, decodeImage, encodeGreyPng, maskUncertainty, parseColour } from "../../src/engine/imaging/index.ts";

test("parseColour: hex in four lengths with or without '#', CSS names in any case; nothing else", () => {
  assert.deepEqual(parseColour("81d4fa"), [0x81, 0xd4, 0xfa, 255]);
  assert.deepEqual(parseColour("#81D4FA77"), [0x81, 0xd4, 0xfa, 0x77]);
  assert.deepEqual(parseColour("f0a"), [0xff, 0x00, 0xaa, 255]);
  assert.deepEqual(parseColour("#f0a8"), [0xff, 0x00, 0xaa, 0x88]);
  assert.deepEqual(parseColour(" DarkSlateGray "), [0x2f, 0x4f, 0x4f, 255]);
  assert.deepEqual(parseColour("transparent"), [0, 0, 0, 0]);
  for (const bad of ["", "#", "81d4f", "81d4fa7", "81d4fa777", "gg0000", "##fff", "rgb(0,0,0)", "toString", "__proto__", "constructor"]) {
    assert.equal(parseColour(bad), undefined, bad);
  }
});

test("composeOverColour: opaque colour gives opaque pixels; half alpha over half alpha", () => {
  const img = { width: 3, height: 1, data: new Uint8ClampedArray([200, 0, 0, 255, 0, 200, 0, 0, 0, 0, 200, 128]) };
  const opaque = composeOverColour(img, [0, 0, 255, 255]);
  assert.deepEqual([...opaque.data], [200, 0, 0, 255, 0, 0, 255, 255, 0, 0, 227, 255]);
  const half = composeOverColour(img, [255, 255, 255, 128]);
  // Straight alpha: out = 0.502 + 0.502 * (1 - 0.502) ≈ 0.752, 191.75 rounded.
  assert.equal(half.data[11], 192);
  assert.deepEqual([...half.data.subarray(4, 8)], [255, 255, 255, 128]);
});

test("encodeGreyPng: colour type 0, and our decoder reads back every value", async () => {
  const w = 37;
  const h = 23;
  const grey = new Uint8Array(w * h).map((_, i) => (i * 97 + (i >> 3)) & 255);
  const png = await encodeGreyPng(w, h, grey);
  assert.equal(png[25], 0);
  const d = await decodeImage(png);
  assert.ok(d.ok);
  assert.deepEqual([d.image.width, d.image.height], [w, h]);
  for (let i = 0; i < w * h; i++) {
    assert.deepEqual([...d.image.data.subarray(i * 4, i * 4 + 4)], [grey[i], grey[i], grey[i], 255], `pixel ${i}`);
  }
  await assert.rejects(encodeGreyPng(2, 2, new Uint8Array(3)), RangeError);
});

test("maskUncertainty: sure masks score 0, an empty one 1, a half-unsure one 0.5", () => {
  assert.equal(maskUncertainty(new Uint8Array(100).fill(255)), 0);
  assert.equal(maskUncertainty(new Uint8Array(100).fill(0)), 1);
  const m = new Uint8Array(100);
  m.fill(255, 0, 20);
  m.fill(128, 20, 40);
  assert.equal(maskUncertainty(m), 0.5);
});
