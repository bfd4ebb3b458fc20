import { test } from "node:test";
import assert from "node:assert/strict";
import { applyMaskAlpha, applyMaskAlphaBytes, composeCutout } from "../../src/engine/imaging/compose.ts";
import { estimateForegroundInPlace } from "../../src/engine/imaging/foreground.ts";
import { decodeImage } from "../../src/engine/imaging/decode.ts";
import { resizeRGBA } from "../../src/engine/imaging/resize.ts";
import type { RGBA } from "../../src/engine/imaging/types.ts";
import { fixture, seededRandom } from "./helpers.ts";

const GREEN = [0, 200, 0];

/**
 * A white disc on a green background, the edge soft over `ramp` pixels: every pixel
 * is the true mix I = a*white + (1-a)*green, and the mask is that a.
 */
function whiteOnGreen(width: number, height: number, ramp: number): { img: RGBA; mask: Uint8Array } {
  const data = new Uint8ClampedArray(width * height * 4);
  const mask = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const d = Math.hypot(x - width / 2, y - height / 2) - height / 3;
    const p = y * width + x;
    mask[p] = Math.round(255 * Math.min(1, Math.max(0, 0.5 - d / ramp)));
    const a = mask[p] / 255;
    for (let c = 0; c < 3; c++) data[p * 4 + c] = a * 255 + (1 - a) * GREEN[c];
    data[p * 4 + 3] = 255;
  }
  return { img: { width, height, data }, mask };
}

/** How much greener than its red/blue average a pixel is. */
const greenExcess = (d: Uint8ClampedArray, p: number) => d[p * 4 + 1] - (d[p * 4] + d[p * 4 + 2]) / 2;

function worstGreen(img: RGBA, mask: Uint8Array, from: number): number {
  let worst = -Infinity;
  for (let p = 0; p < mask.length; p++) {
    if (mask[p] >= from && mask[p] < 255) worst = Math.max(worst, greenExcess(img.data, p));
  }
  return worst;
}

test("no green halo at a soft edge (semitransparency on)", () => {
  for (const ramp of [3, 8]) {
    const { img, mask } = whiteOnGreen(300, 200, ramp);
    // The input edge is clearly green, so this test can fail.
    assert.ok(worstGreen(img, mask, 26) > 100);
    const out = composeCutout(img, mask, { semitransparency: true });
    assert.ok(worstGreen(out, mask, 26) < 8, `ramp ${ramp}: green excess ${worstGreen(out, mask, 26)}`);
    for (let p = 0; p < mask.length; p++) assert.equal(out.data[p * 4 + 3], mask[p]);
  }
});

test("a wide soft edge (a 1024 px mask blown up to 12 MP) stays close to white", () => {
  const { img, mask } = whiteOnGreen(600, 400, 30);
  const out = composeCutout(img, mask, { semitransparency: true });
  let sum = 0, n = 0;
  for (let p = 0; p < mask.length; p++) {
    if (mask[p] >= 26 && mask[p] < 255) {
      sum += greenExcess(out.data, p);
      n++;
    }
  }
  assert.ok(sum / n < 10, `mean green excess ${sum / n}`);
});

test("hardened alpha (semitransparency off): only 0 or 255, and the opaque edge is not green", () => {
  const { img, mask } = whiteOnGreen(300, 200, 8);
  const out = composeCutout(img, mask, { semitransparency: false });
  for (let p = 0; p < mask.length; p++) {
    const a = out.data[p * 4 + 3];
    assert.equal(a, mask[p] >= 128 ? 255 : 0, `pixel ${p}, mask ${mask[p]}`);
    if (a === 255 && mask[p] < 255) assert.ok(greenExcess(out.data, p) < 8, `edge pixel ${p} is greenish`);
  }
});

test("fully transparent pixels have RGB 0", () => {
  const { img, mask } = whiteOnGreen(120, 80, 6);
  for (const semitransparency of [true, false]) {
    const out = composeCutout(img, mask, { semitransparency });
    for (let p = 0; p < mask.length; p++) {
      if (out.data[p * 4 + 3] === 0) assert.deepEqual([...out.data.subarray(p * 4, p * 4 + 3)], [0, 0, 0]);
    }
  }
});

test("the subject's interior keeps its exact colours", () => {
  const { img, mask } = whiteOnGreen(120, 80, 6);
  img.data.set([10, 20, 30, 255], (40 * 120 + 60) * 4); // a dark speck in the middle
  const out = composeCutout(img, mask, { semitransparency: true });
  assert.deepEqual([...out.data.subarray((40 * 120 + 60) * 4, (40 * 120 + 60) * 4 + 4)], [10, 20, 30, 255]);
  assert.notEqual(out.data, img.data, "a new buffer: the input is not changed");
});

test("existing input transparency is kept: output alpha is mask times input alpha", () => {
  const img: RGBA = { width: 2, height: 1, data: new Uint8ClampedArray([50, 60, 70, 128, 50, 60, 70, 255]) };
  const out = composeCutout(img, new Uint8Array([255, 128]), { semitransparency: true });
  assert.equal(out.data[3], 128);
  assert.equal(out.data[7], 128);
});

test("photo subject on a photo background: edge colours move towards the true subject", async () => {
  // Real textures: the cat (subject) over the rocket photo (background), mixed with a
  // known soft mask. The estimate must be much nearer the cat than the mix is.
  const cat = await decodeImage(fixture("photos/chelsea.png"));
  const rocket = await decodeImage(fixture("photos/rocket.jpg"));
  assert.ok(cat.ok && rocket.ok);
  const { width, height } = cat.image;
  const F = cat.image.data;
  const B = resizeRGBA(rocket.image, width, height).data;
  const mask = new Uint8Array(width * height);
  const mixed = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const p = y * width + x;
    const d = Math.hypot((x - width / 2) / 1.3, y - height / 2) - height / 3 + 10 * Math.sin(x / 7);
    mask[p] = Math.round(255 * Math.min(1, Math.max(0, 0.5 - d / 6)));
    const a = mask[p] / 255;
    for (let c = 0; c < 3; c++) mixed[p * 4 + c] = a * F[p * 4 + c] + (1 - a) * B[p * 4 + c];
    mixed[p * 4 + 3] = 255;
  }
  const out = composeCutout({ width, height, data: mixed }, mask, { semitransparency: true });
  let errEstimate = 0, errMixed = 0, weight = 0;
  for (let p = 0; p < mask.length; p++) {
    if (mask[p] === 0 || mask[p] === 255) continue;
    const a = mask[p] / 255; // what matters is what shows: weight by alpha
    weight += a;
    for (let c = 0; c < 3; c++) {
      errEstimate += a * Math.abs(out.data[p * 4 + c] - F[p * 4 + c]);
      errMixed += a * Math.abs(mixed[p * 4 + c] - F[p * 4 + c]);
    }
  }
  errEstimate /= weight * 3;
  errMixed /= weight * 3;
  assert.ok(errEstimate < errMixed / 2, `estimate off by ${errEstimate.toFixed(1)}, the mix by ${errMixed.toFixed(1)}`);
});

test("a uniform colour stays exact at soft edges, on fine and coarse grids", () => {
  // With F = B = I everywhere every average is I, so the estimate must return I.
  // Wrong per-cell sample counts on the coarse grids used for big images (cells of
  // k x k pixels, sampled sparsely from k = 4) would scale the averages and show here.
  const width = 300, height = 200;
  const mask = new Uint8Array(width * height);
  for (let p = 0; p < mask.length; p++) mask[p] = (p * 7919) % 256; // every alpha value, scattered
  for (const k of [1, 2, 3, 4, 5, 7]) {
    const data = new Uint8ClampedArray(width * height * 4);
    for (let i = 0; i < data.length; i += 4) data.set([90, 140, 210, 255], i);
    estimateForegroundInPlace(data, mask, width, height, (width * height) / (k * k));
    for (let p = 0; p < mask.length; p++) {
      const [r, g, b] = data.subarray(p * 4, p * 4 + 3);
      if (Math.abs(r - 90) > 1 || Math.abs(g - 140) > 1 || Math.abs(b - 210) > 1) {
        assert.fail(`cells of ${k} px, pixel ${p} (alpha ${mask[p]}): ${r},${g},${b}`);
      }
    }
  }
});

test("mask of the wrong size throws", () => {
  const { img } = whiteOnGreen(10, 10, 2);
  assert.throws(() => composeCutout(img, new Uint8Array(99), { semitransparency: true }), RangeError);
});

test("applyMaskAlpha's word path gives the byte path's bytes, soft and hard, any input alpha", () => {
  const random = seededRandom(14);
  const n = 4099; // not a multiple of anything the loops might assume
  for (const hard of [false, true]) {
    for (const inputAlphas of [[255], [0, 17, 128, 254, 255]]) {
      const rgba = Uint8ClampedArray.from({ length: n * 4 }, (_, i) => (i % 4 === 3 ? inputAlphas[Math.floor(random() * inputAlphas.length)] : Math.floor(random() * 256)));
      // Mask values with runs of 0 and 255 as real masks have, and every soft value.
      const mask = Uint8Array.from({ length: n }, (_, p) => (p % 300 < 100 ? 0 : p % 300 < 150 ? 255 : Math.floor(random() * 256)));
      const [byBytes, byWords] = [rgba.slice(), rgba.slice()];
      const [maskBytes, maskWords] = [mask.slice(), mask.slice()];
      applyMaskAlphaBytes(byBytes, maskBytes, hard, 7, n - 5);
      applyMaskAlpha(byWords, maskWords, hard, 7, n - 5);
      assert.deepEqual(Buffer.from(byWords), Buffer.from(byBytes), `hard ${hard}, input alphas ${inputAlphas}`);
      assert.deepEqual(Buffer.from(maskWords), Buffer.from(maskBytes));
    }
  }
});

test("edge colours: skipping runs of 0 and 255 four at a time changes no byte", () => {
  // The same soft disc with the mask at a 4-byte boundary (runs skipped by words) and
  // one byte past it (every pixel looked at), at widths that do and do not divide by 4.
  for (const [width, height] of [[120, 80], [121, 79]]) {
    const { img, mask } = whiteOnGreen(width, height, 12);
    const shifted = new Uint8Array(mask.length + 1);
    shifted.set(mask, 1);
    const [byWords, byBytes] = [img.data.slice(), img.data.slice()];
    estimateForegroundInPlace(byWords, mask, width, height, 400);
    estimateForegroundInPlace(byBytes, shifted.subarray(1), width, height, 400);
    assert.deepEqual(Buffer.from(byWords), Buffer.from(byBytes), `${width} x ${height}`);
    assert.notDeepEqual(Buffer.from(byWords), Buffer.from(img.data), "the edge was corrected");
  }
});
