import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { outputSize, PREVIEW_MAX_PIXELS } from "../../src/contract/tiers.ts";

test("preview, small and regular shrink 12 MP to at most 0.25 MP, keeping 4:3", () => {
  for (const size of ["preview", "small", "regular"] as const) {
    const out = outputSize(4000, 3000, size);
    assert.deepEqual(out, { width: 577, height: 433 }, size);
    assert.ok(out.width * out.height <= 250_000);
  }
  assert.deepEqual(outputSize(3000, 4000, "preview"), { width: 433, height: 577 });
});

test("auto, full and no size keep the input size", () => {
  for (const size of ["auto", "full", undefined] as const) {
    assert.deepEqual(outputSize(4000, 3000, size), { width: 4000, height: 3000 });
    assert.deepEqual(outputSize(10, 10, size), { width: 10, height: 10 });
  }
});

test("small inputs are never enlarged", () => {
  assert.deepEqual(outputSize(500, 500, "preview"), { width: 500, height: 500 }); // exactly 250,000
  assert.deepEqual(outputSize(240, 160, "small"), { width: 240, height: 160 });
  assert.deepEqual(outputSize(1, 1, "regular"), { width: 1, height: 1 });
  assert.deepEqual(outputSize(501, 500, "preview"), { width: 500, height: 499 });
});

test("exact scales are not lost to floating-point noise", () => {
  // sqrt(250000 / (911 * 911)) * 911 is 499.99999999999994 in floating point.
  assert.deepEqual(outputSize(911, 911, "preview"), { width: 500, height: 500 });
  assert.deepEqual(outputSize(582, 2328, "preview"), { width: 250, height: 1000 });
});

test("extreme aspect ratios keep each side at least 1 and stay within the limit", () => {
  assert.deepEqual(outputSize(12_000_000, 1, "preview"), { width: 250_000, height: 1 });
  assert.deepEqual(outputSize(1, 12_000_000, "preview"), { width: 1, height: 250_000 });
  assert.deepEqual(outputSize(6_000_000, 2, "preview"), { width: 250_000, height: 1 });
});

test("property: within the limit, never larger, sides ≥ 1, aspect kept", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 1, max: 20_000 }), (w, h) => {
      const out = outputSize(w, h, "preview");
      assert.ok(out.width >= 1 && out.height >= 1);
      assert.ok(out.width <= w && out.height <= h);
      assert.ok(out.width * out.height <= PREVIEW_MAX_PIXELS);
      if (w * h <= PREVIEW_MAX_PIXELS) assert.deepEqual(out, { width: w, height: h });
      else if (out.width >= 50 && out.height >= 50) {
        // Rounding each side down moves the ratio by at most one pixel's worth.
        const ratio = out.width / out.height / (w / h);
        assert.ok(ratio > 0.97 && ratio < 1.03, `${w}x${h} -> ${out.width}x${out.height}`);
        // Not needlessly small: each side lost less than one pixel to rounding.
        assert.ok((out.width + 1) * (out.height + 1) > PREVIEW_MAX_PIXELS);
      }
    }),
    { numRuns: 2000 },
  );
});
