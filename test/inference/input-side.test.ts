// The rule for the model's input size (src/engine/inference/input-side.ts) and the cost
// admission derives from it (src/product/job-cost.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { SMALL_INPUT_SIDE, SMALL_PICTURE_SIDE, modelInputSize } from "../../src/engine/inference/input-side.ts";
import { jobCostFor } from "../../src/product/job-cost.ts";

const full = { width: 1024, height: 1024 };
const sizeFree = { inputSize: full, sizes: { multipleOf: 64, min: 64, max: 1024 } };

test("a small picture gets the small side, a large one the model's full size, whatever its orientation", () => {
  assert.deepEqual(modelInputSize(sizeFree, { width: 741, height: 500 }), { width: SMALL_INPUT_SIDE, height: SMALL_INPUT_SIDE });
  assert.deepEqual(modelInputSize(sizeFree, { width: 300, height: SMALL_PICTURE_SIDE }), { width: SMALL_INPUT_SIDE, height: SMALL_INPUT_SIDE });
  assert.deepEqual(modelInputSize(sizeFree, { width: SMALL_PICTURE_SIDE + 1, height: 200 }), full);
  assert.deepEqual(modelInputSize(sizeFree, { width: 2828, height: 4242 }), full);
});

test("a model that takes only its own size always gets it; a model's range bounds the small side", () => {
  assert.deepEqual(modelInputSize({ inputSize: full }, { width: 100, height: 100 }), full);
  const narrow = { inputSize: { width: 320, height: 320 }, sizes: { multipleOf: 32, min: 160, max: 320 } };
  assert.deepEqual(modelInputSize(narrow, { width: 100, height: 100 }), { width: 320, height: 320 }, "never above the model's own size");
  const floor = { inputSize: full, sizes: { multipleOf: 64, min: 960, max: 1024 } };
  assert.deepEqual(modelInputSize(floor, { width: 100, height: 100 }), { width: 960, height: 960 });
});

test("admission's cost is the input's share of the full input", () => {
  const cost = jobCostFor({ inputSize: [1024, 1024], sizes: sizeFree.sizes });
  assert.equal(cost(741, 500), (SMALL_INPUT_SIDE / 1024) ** 2);
  assert.equal(cost(4242, 2828), 1);
  assert.equal(jobCostFor({ inputSize: [1024, 1024] })(10, 10), 1);
  assert.equal(jobCostFor(undefined)(10, 10), 1);
});
