import { test } from "node:test";
import assert from "node:assert/strict";
import { applyOrientation } from "../../src/engine/imaging/orient.ts";
import { decodeImage } from "../../src/engine/imaging/decode.ts";
import type { Orientation, RGBA } from "../../src/engine/imaging/types.ts";
import { fixture } from "./helpers.ts";

type Colour = "red" | "green" | "blue" | "white";

function colourAt(img: RGBA, x: number, y: number): Colour | string {
  const i = (y * img.width + x) * 4;
  const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
  const hi = (v: number) => v > 190;
  const lo = (v: number) => v < 70;
  if (hi(r) && lo(g) && lo(b)) return "red";
  if (lo(r) && hi(g) && lo(b)) return "green";
  if (lo(r) && lo(g) && hi(b)) return "blue";
  if (hi(r) && hi(g) && hi(b)) return "white";
  return `rgb(${r},${g},${b})`;
}

/** The upright test card: 64 x 48, red top-left, green top-right, blue bottom-left. */
function assertUpright(img: RGBA, what: string): void {
  assert.deepEqual([img.width, img.height], [64, 48], `${what}: size`);
  assert.deepEqual(
    [colourAt(img, 7, 7), colourAt(img, 56, 7), colourAt(img, 7, 40), colourAt(img, 56, 40), colourAt(img, 32, 24)],
    ["red", "green", "blue", "white", "white"],
    `${what}: corners`,
  );
}

test("every EXIF orientation of the JPEG test card comes out upright", async () => {
  for (let n = 1; n <= 8; n++) {
    const r = await decodeImage(fixture(`images/orient-${n}.jpg`));
    assert.ok(r.ok);
    assert.equal(r.header.orientation, n);
    assertUpright(applyOrientation(r.image, r.header.orientation), `orientation ${n}`);
  }
});

test("WebP EXIF orientation 6 comes out upright", async () => {
  const r = await decodeImage(fixture("images/webp-exif-orient-6.webp"));
  assert.ok(r.ok && r.header.orientation === 6);
  assertUpright(applyOrientation(r.image, r.header.orientation), "webp");
});

test("the stored (unoriented) card is really turned, so the test above can fail", async () => {
  const r = await decodeImage(fixture("images/orient-6.jpg"));
  assert.ok(r.ok);
  assert.throws(() => assertUpright(r.image, "raw"));
  assert.throws(() => assertUpright(applyOrientation(r.image, 8), "wrong way"));
});

/** A 3 x 2 image whose pixels are numbered 0..5 in the red channel. */
function numbered(): RGBA {
  const data = new Uint8ClampedArray(6 * 4);
  for (let i = 0; i < 6; i++) data.set([i, 0, 0, 255], i * 4);
  return { width: 3, height: 2, data };
}

const labels = (img: RGBA) => Array.from({ length: img.width * img.height }, (_, i) => img.data[i * 4]);

test("exact pixel order for all 8 orientations (EXIF 2.3 definitions)", () => {
  // Stored:  0 1 2      Each expectation is what a viewer shows.
  //          3 4 5
  const expected: Record<Orientation, { w: number; h: number; px: number[] }> = {
    1: { w: 3, h: 2, px: [0, 1, 2, 3, 4, 5] },
    2: { w: 3, h: 2, px: [2, 1, 0, 5, 4, 3] }, // mirrored left-right
    3: { w: 3, h: 2, px: [5, 4, 3, 2, 1, 0] }, // turned 180°
    4: { w: 3, h: 2, px: [3, 4, 5, 0, 1, 2] }, // mirrored top-bottom
    5: { w: 2, h: 3, px: [0, 3, 1, 4, 2, 5] }, // transposed
    6: { w: 2, h: 3, px: [3, 0, 4, 1, 5, 2] }, // turned 90° clockwise
    7: { w: 2, h: 3, px: [5, 2, 4, 1, 3, 0] }, // transversed
    8: { w: 2, h: 3, px: [2, 5, 1, 4, 0, 3] }, // turned 90° anticlockwise
  };
  for (const o of [1, 2, 3, 4, 5, 6, 7, 8] as Orientation[]) {
    const out = applyOrientation(numbered(), o);
    assert.deepEqual({ w: out.width, h: out.height, px: labels(out) }, expected[o], `orientation ${o}`);
  }
});

test("orientation 1 returns the input; others leave the input untouched", () => {
  const img = numbered();
  assert.equal(applyOrientation(img, 1), img);
  const before = labels(img);
  applyOrientation(img, 6);
  assert.deepEqual(labels(img), before);
});

test("works on a pixel view that is not 4-byte aligned", () => {
  const buffer = new ArrayBuffer(6 * 4 + 1);
  const data = new Uint8ClampedArray(buffer, 1, 6 * 4);
  data.set(numbered().data);
  const out = applyOrientation({ width: 3, height: 2, data }, 3);
  assert.deepEqual(labels(out), [5, 4, 3, 2, 1, 0]);
});
