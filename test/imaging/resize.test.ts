import { test } from "node:test";
import assert from "node:assert/strict";
import { resizeMask, resizeRGBA, resizeToRGB } from "../../src/engine/imaging/resize.ts";
import { axisFilter } from "../../src/engine/imaging/resample.ts";
import type { RGBA } from "../../src/engine/imaging/types.ts";

function solid(width: number, height: number, rgba: [number, number, number, number]): RGBA {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
  return { width, height, data };
}

function stats(values: ArrayLike<number>, stride: number, offset: number): { mean: number; sd: number; min: number; max: number } {
  let sum = 0, sq = 0, n = 0, min = Infinity, max = -Infinity;
  for (let i = offset; i < values.length; i += stride) {
    const v = values[i];
    sum += v;
    sq += v * v;
    n++;
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const mean = sum / n;
  return { mean, sd: Math.sqrt(sq / n - mean * mean), min, max };
}

test("filter weights: every output's weights sum to 1, shrinking or growing", () => {
  for (const [s, d] of [[4000, 1024], [3000, 433], [7, 3], [10, 10], [3, 7], [1024, 4000], [1, 5], [5, 1]]) {
    const f = axisFilter(s, d);
    for (let i = 0; i < d; i++) {
      let sum = 0;
      for (let k = 0; k < f.taps[i]; k++) sum += f.weights[i * f.maxTaps + k];
      assert.ok(Math.abs(sum - 1) < 1e-5, `${s}->${d} output ${i}: ${sum}`);
      assert.ok(f.first[i] >= 0 && f.first[i] + f.taps[i] <= s, `${s}->${d} output ${i} reads outside`);
    }
  }
});

test("halving averages each 2 x 2 block exactly", () => {
  const img = solid(4, 2, [0, 0, 0, 255]);
  // Left block: 0, 40, 80, 120 in red -> mean 60. Right block: all 200.
  [0, 40].forEach((v, x) => (img.data[x * 4] = v));
  [80, 120].forEach((v, x) => (img.data[(4 + x) * 4] = v));
  for (const p of [2, 3, 6, 7]) img.data[p * 4] = 200;
  const out = resizeRGBA(img, 2, 1);
  assert.deepEqual([...out.data], [60, 0, 0, 255, 200, 0, 0, 255]);
});

test("bilinear growth between pixel centres, clamped at the edges", () => {
  const mask = resizeMask(new Uint8Array([0, 255]), 2, 1, 4, 1);
  // centres map to -0.25, 0.25, 0.75, 1.25 in the source
  assert.deepEqual([...mask], [0, 64, 191, 255]);
});

test("a constant image stays constant at any size", () => {
  const img = solid(37, 23, [10, 120, 250, 255]);
  for (const [w, h] of [[5, 3], [100, 90], [37, 5], [1, 1]]) {
    const out = resizeRGBA(img, w, h);
    assert.equal(out.data.length, w * h * 4);
    for (let i = 0; i < out.data.length; i += 4) assert.deepEqual([...out.data.subarray(i, i + 4)], [10, 120, 250, 255]);
  }
});

test("no aliasing: 1-pixel stripes shrunk by an odd factor come out as even grey", () => {
  // 2000 x 1500 of alternating black and white columns and rows (a checkerboard),
  // shrunk to the preview size. Sampling without a prefilter turns this into
  // strong moiré (values spread from 0 to 255); area averaging gives ~127.5 everywhere.
  const w = 2000, h = 1500;
  const data = new Uint8ClampedArray(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const v = (x + y) % 2 === 0 ? 255 : 0;
    data.set([v, v, v, 255], (y * w + x) * 4);
  }
  const out = resizeRGBA({ width: w, height: h, data }, 577, 433);
  const s = stats(out.data, 4, 0);
  // The check discriminates: nearest-pixel sampling of the same pattern is all 0 or 255.
  const nearest = new Uint8Array(577 * 433);
  for (let y = 0; y < 433; y++) for (let x = 0; x < 577; x++) {
    const sx = Math.floor(((x + 0.5) * w) / 577), sy = Math.floor(((y + 0.5) * h) / 433);
    nearest[y * 577 + x] = data[(sy * w + sx) * 4];
  }
  assert.ok(stats(nearest, 1, 0).sd > 100);
  assert.ok(Math.abs(s.mean - 127.5) < 1, `mean ${s.mean}`);
  assert.ok(s.sd < 6 && s.min > 100 && s.max < 155, `spread: sd ${s.sd.toFixed(1)}, ${s.min}..${s.max}`);
});

test("resizeToRGB gives packed RGB; transparent areas count as black", () => {
  const img = solid(4, 4, [200, 100, 50, 255]);
  const rgb = resizeToRGB(img, 2, 2);
  assert.equal(rgb.length, 2 * 2 * 3);
  assert.deepEqual([...rgb.subarray(0, 3)], [200, 100, 50]);
  const hidden = solid(4, 4, [255, 0, 255, 0]); // magenta, fully transparent
  assert.deepEqual([...resizeToRGB(hidden, 2, 2)], new Array(12).fill(0));
  const half = solid(2, 2, [200, 100, 50, 128]);
  assert.deepEqual([...resizeToRGB(half, 1, 1)], [100, 50, 25]);
});

test("hidden colour under alpha 0 does not bleed into visible pixels", () => {
  // Left column: opaque white. Right column: transparent pure blue.
  const img = solid(2, 1, [255, 255, 255, 255]);
  img.data.set([0, 0, 255, 0], 4);
  const out = resizeRGBA(img, 1, 1);
  assert.deepEqual([...out.data], [255, 255, 255, 128], "half coverage, but still white");
});

test("resizeRGBA returns the input when the size is unchanged", () => {
  const img = solid(3, 3, [1, 2, 3, 4]);
  assert.equal(resizeRGBA(img, 3, 3), img);
});

test("resizeMask: shrinking averages, growing interpolates, same size copies", () => {
  const mask = new Uint8Array([0, 0, 255, 255, 0, 0, 255, 255]); // 4 x 2
  assert.deepEqual([...resizeMask(mask, 4, 2, 2, 1)], [0, 255]);
  assert.deepEqual([...resizeMask(mask, 4, 2, 1, 1)], [128]);
  const same = resizeMask(mask, 4, 2, 4, 2);
  assert.deepEqual([...same], [...mask]);
  assert.notEqual(same, mask);
  const big = resizeMask(new Uint8Array([0, 255, 255, 0]), 2, 2, 64, 64);
  assert.equal(big.length, 64 * 64);
  const s = stats(big, 1, 0);
  assert.ok(s.min === 0 && s.max === 255 && Math.abs(s.mean - 127.5) < 2, JSON.stringify(s));
});

test("bad sizes are programming errors and throw", () => {
  const img = solid(2, 2, [0, 0, 0, 255]);
  assert.throws(() => resizeRGBA(img, 0, 5), RangeError);
  assert.throws(() => resizeToRGB(img, 2.5, 5), RangeError);
  assert.throws(() => resizeMask(new Uint8Array(3), 2, 2, 4, 4), RangeError);
});
