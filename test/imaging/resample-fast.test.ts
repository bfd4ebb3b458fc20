// The fast kernels of resample-fast.ts must give exactly the bytes of the general engine
// (resample.ts) they stand in for: compared on random images and masks, shrinking and
// growing, odd sizes included.
import { test } from "node:test";
import assert from "node:assert/strict";
import { resampleRows } from "../../src/engine/imaging/resample.ts";
import { growMaskRows, isOpaque, resampleOpaqueRows } from "../../src/engine/imaging/resample-fast.ts";

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) >>> 24);
}

/** A noisy but not white-noise image: smooth ramps plus noise, alpha 255. */
function opaqueImage(w: number, h: number, seed: number): Uint8ClampedArray {
  const next = random(seed);
  const data = new Uint8ClampedArray(w * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4;
      data[i] = (x * 7 + next()) & 255;
      data[i + 1] = (y * 5 + next()) & 255;
      data[i + 2] = next();
      data[i + 3] = 255;
    }
  }
  return data;
}

test("opaque kernel: the general engine's colour values, shrinking and growing", () => {
  for (const [w, h, dw, dh] of [[97, 61, 24, 24], [424, 282, 102, 102], [31, 17, 64, 40], [50, 50, 50, 50], [13, 200, 7, 333], [1, 1, 3, 2]]) {
    const data = opaqueImage(w, h, w * 31 + h);
    const general: number[] = [];
    resampleRows({ width: w, height: h, data, channels: 4 }, dw, dh, false, (row) => {
      for (let i = 0; i < row.length; i += 4) general.push(row[i], row[i + 1], row[i + 2]);
    });
    const fast: number[] = [];
    resampleOpaqueRows({ width: w, height: h, data }, dw, dh, (row) => fast.push(...row));
    assert.deepEqual(fast, general, `${w}x${h} -> ${dw}x${dh}`);
  }
});

test("mask growth kernel: the general engine's bytes", () => {
  for (const [mw, mh, dw, dh] of [[64, 64, 265, 177], [102, 102, 424, 283], [5, 3, 5, 11], [3, 5, 11, 5], [1, 1, 4, 4], [17, 9, 17, 9]]) {
    const next = random(mw * 7 + mh);
    const noise = Uint8Array.from({ length: mw * mh }, () => next());
    for (const mask of [noise, blob(mw, mh, next), new Uint8Array(mw * mh)]) assertGrowsAsGeneral(mask, mw, mh, dw, dh);
  }
  // Wide enough for many of growMaskRows's blocks, with runs of 0 between live ones.
  for (const [mw, mh, dw, dh] of [[100, 40, 1000, 130], [256, 64, 1061, 300]]) assertGrowsAsGeneral(blob(mw, mh, random(mw)), mw, mh, dw, dh);
});

/** A mask like a model's: 0 around a soft-edged disc, 255 inside, with a few stray low values. */
function blob(mw: number, mh: number, next: () => number): Uint8Array {
  const mask = new Uint8Array(mw * mh);
  for (let y = 0; y < mh; y++) for (let x = 0; x < mw; x++) {
    const d = Math.hypot((x - mw / 2) / mw, (y - mh / 2) / mh) * 4 - 1; // < 0 inside
    const v = d < -0.1 ? 255 : d < 0.1 ? Math.round(255 * (0.1 - d) / 0.2) : next() < 8 ? 3 : 0;
    mask[y * mw + x] = v;
  }
  return mask;
}

function assertGrowsAsGeneral(mask: Uint8Array, mw: number, mh: number, dw: number, dh: number): void {
  const general = new Uint8Array(dw * dh);
  resampleRows({ width: mw, height: mh, data: mask, channels: 1 }, dw, dh, false, (row, y) => {
    for (let x = 0; x < dw; x++) general[y * dw + x] = Math.min(255, row[x] + 0.5);
  });
  // Into memory full of junk: a block left unwritten would show.
  const out = new Uint8Array(dw * dh).fill(77);
  growMaskRows(mask, mw, mh, dw, dh, out, { y0: 0, y1: dh });
  assert.deepEqual(out, general, `${mw}x${mh} -> ${dw}x${dh}`);
}

test("isOpaque: any alpha below 255 counts, wherever it is", () => {
  const data = opaqueImage(9, 7, 1);
  assert.equal(isOpaque(data), true);
  for (const at of [0, 30, 62]) {
    const copy = data.slice();
    copy[at * 4 + 3] = 254;
    assert.equal(isOpaque(copy), false);
  }
  assert.equal(isOpaque(data.subarray(4)), true, "an unaligned view is read correctly");
});
