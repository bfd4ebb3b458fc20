import { test } from "node:test";
import assert from "node:assert/strict";
import { outputToMask, rgbToNchw } from "../../src/engine/inference/tensor.ts";

test("rgbToNchw: planar channels, (x/255 - mean)/std per channel", () => {
  // 2x1 image: pixel 0 = (0, 255, 51), pixel 1 = (255, 0, 102)
  const rgb = new Uint8Array([0, 255, 51, 255, 0, 102]);
  const out = rgbToNchw(rgb, 2, 1, [0.5, 0.5, 0.5], [1, 1, 0.5]);
  assert.equal(out.length, 6);
  const expected = [-0.5, 0.5, 0.5, -0.5, (0.2 - 0.5) / 0.5, (0.4 - 0.5) / 0.5];
  for (let i = 0; i < 6; i++) assert.ok(Math.abs(out[i]! - expected[i]!) < 1e-6, `value ${i}: ${out[i]} vs ${expected[i]}`);
});

test("rgbToNchw: wrong byte count is refused", () => {
  assert.throws(() => rgbToNchw(new Uint8Array(5), 2, 1, [0, 0, 0], [1, 1, 1]), RangeError);
});

test("outputToMask clamp: probabilities scale to 0..255, out-of-range and NaN clamp", () => {
  const mask = outputToMask(new Float32Array([0, 0.5, 1, -0.2, 1.7, Number.NaN, 0.1]), "clamp");
  assert.deepEqual([...mask], [0, 128, 255, 0, 255, 0, 26]);
});

test("outputToMask minmax: stretches to the output's own range; flat output is all zero", () => {
  assert.deepEqual([...outputToMask(new Float32Array([1, 2, 3]), "minmax")], [0, 128, 255]);
  assert.deepEqual([...outputToMask(new Float32Array([0.3, 0.3]), "minmax")], [0, 0]);
});

test("rgbToNchw writes into a given buffer, every value of it, and refuses one of the wrong size", () => {
  const rgb = Uint8Array.from([255, 0, 51, 0, 255, 102]);
  const out = new Float32Array(6).fill(Number.NaN); // leftovers of an earlier run
  assert.equal(rgbToNchw(rgb, 2, 1, [0.5, 0.5, 0.5], [1, 1, 0.5], out), out);
  assert.deepEqual(out, rgbToNchw(rgb, 2, 1, [0.5, 0.5, 0.5], [1, 1, 0.5]));
  assert.throws(() => rgbToNchw(rgb, 2, 1, [0, 0, 0], [1, 1, 1], new Float32Array(5)), RangeError);
});
