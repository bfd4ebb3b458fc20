import { test } from "node:test";
import assert from "node:assert/strict";
import { foregroundBox } from "../../src/engine/imaging/bbox.ts";

function maskWith(width: number, height: number, set: Array<[x: number, y: number, v: number]>): Uint8Array {
  const m = new Uint8Array(width * height);
  for (const [x, y, v] of set) m[y * width + x] = v;
  return m;
}

test("an empty mask gives zeros", () => {
  assert.deepEqual(foregroundBox(new Uint8Array(20), 5, 4), { top: 0, left: 0, width: 0, height: 0 });
});

test("one pixel", () => {
  assert.deepEqual(foregroundBox(maskWith(5, 4, [[3, 2, 255]]), 5, 4), { top: 2, left: 3, width: 1, height: 1 });
});

test("scattered pixels span the box; rows scanned from both ends", () => {
  const m = maskWith(10, 8, [[4, 1, 200], [1, 3, 255], [8, 3, 255], [5, 6, 130]]);
  assert.deepEqual(foregroundBox(m, 10, 8), { top: 1, left: 1, width: 8, height: 6 });
});

test("values below the threshold are not foreground", () => {
  const m = maskWith(10, 8, [[2, 2, 255], [9, 7, 40]]);
  assert.deepEqual(foregroundBox(m, 10, 8), { top: 2, left: 2, width: 1, height: 1 }, "default 128");
  assert.deepEqual(foregroundBox(m, 10, 8, 30), { top: 2, left: 2, width: 8, height: 6 });
  assert.deepEqual(foregroundBox(m, 10, 8, 0), { top: 2, left: 2, width: 8, height: 6 }, "0 still skips alpha 0");
});

test("a full mask covers the image", () => {
  assert.deepEqual(foregroundBox(new Uint8Array(12).fill(255), 4, 3), { top: 0, left: 0, width: 4, height: 3 });
});

test("a mask of the wrong length throws", () => {
  assert.throws(() => foregroundBox(new Uint8Array(11), 4, 3), RangeError);
});
