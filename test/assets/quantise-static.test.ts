// The static (QDQ) form of the int8 model on the tiny IS-Net-shaped graph: which tensors
// get a Q/DQ pair, calibration on onnxruntime-node, the rewrite's weights and pairs, and
// that the static graph runs on WebAssembly and gives the float graph's mask.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DataType, parseModel } from "../../src/engine/assets/onnx-graph.ts";
import { calibrateRanges } from "../../src/engine/assets/quantise-calibrate.ts";
import { prepareStatic, quantiseStatic, rangeParams } from "../../src/engine/assets/quantise-static.ts";
import { importNativeOrt } from "../../src/engine/inference/backend-native.ts";
import { maskDifference, openTinyVariant, tinyIsNetModel } from "../support/tiny-onnx.ts";

const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));
const SIZE = 64;

function image(seed: number): Uint8Array {
  const rgb = new Uint8Array(SIZE * SIZE * 3);
  for (let i = 0; i < rgb.length; i++) rgb[i] = (i * (37 + seed) + (i >> 7) * 11 + seed * 53) & 255;
  return rgb;
}
const nchw = (rgb: Uint8Array) => {
  const out = new Float32Array(rgb.length);
  const plane = SIZE * SIZE;
  for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) out[c * plane + i] = rgb[i * 3 + c]! / 255 - 0.5;
  return out;
};

test("the tensors quantised: the input and the ReLU output a conv reads; not a conv output its ReLU folds, nor what only the sigmoid reads", () => {
  const g = prepareStatic(tinyIsNetModel().bytes, []);
  assert.deepEqual(g.quantised, ["input", "h2"]);
  assert.deepEqual(prepareStatic(tinyIsNetModel().bytes, ["Conv_h", "Relu_h"]).quantised, [], "all in the float region: nothing");
  assert.deepEqual(prepareStatic(tinyIsNetModel().bytes, ["Conv_h3"]).quantised, ["input", "h2"], "the quantised part's ReLU output keeps its pair where a float conv reads it");
});

test("range parameters hold zero exactly; a non-negative range has zero point 0 (so ReLU folds)", () => {
  assert.deepEqual(rangeParams(0, 2.55), { scale: Math.fround(0.01), zero: 0 });
  const p = rangeParams(-1, 3);
  assert.equal(p.zero, 64);
  assert.ok(Math.abs(p.scale * 255 - 4) < 1e-6);
  assert.ok(rangeParams(0, 0).scale > 0, "a constant-zero tensor still gets a usable scale");
});

test("calibrated static graph: int8 per-channel weights, one Q/DQ pair per quantised tensor, deterministic, and its mask matches the float graph's on WebAssembly (calibration needs onnxruntime-node)", async (t) => {
  if (!(await importNativeOrt().then(() => true, () => false))) return t.skip("onnxruntime-node did not load");
  const tiny = tinyIsNetModel(SIZE, SIZE);
  const g = prepareStatic(tiny.bytes, []);
  const inputs = [0, 1, 2].map((s) => nchw(image(s)));
  const ranges = await calibrateRanges(g, inputs, { inputName: "input", dims: [1, 3, SIZE, SIZE], threads: 1 });
  assert.deepEqual(Object.keys(ranges).sort(), ["h2", "input"]);
  assert.ok(ranges.h2![0] >= 0 && ranges.h2![1] > 0, "a ReLU output's range is non-negative");
  const clipped = await calibrateRanges(g, inputs, { inputName: "input", dims: [1, 3, SIZE, SIZE], threads: 1, tail: 0.25 });
  assert.ok(clipped.h2![1] < ranges.h2![1], "a tail clips below the exact maximum");
  assert.deepEqual(clipped.input, ranges.input, "the graph input keeps its exact range");
  assert.throws(() => quantiseStatic(g, { input: ranges.input! }), /no calibrated range for tensor h2/);

  const a = quantiseStatic(g, ranges);
  const b = quantiseStatic(prepareStatic(tiny.bytes, []), ranges);
  assert.deepEqual(a.bytes, b.bytes, "same bytes and ranges in, same file out");
  assert.deepEqual([a.quantised, a.float], [2, 0]);
  const m = parseModel(a.bytes);
  assert.equal(m.nodes.filter((n) => n.opType === "QuantizeLinear").length, 2);
  const w1 = m.initializers.find((t) => t.name === "w1_s8")!;
  assert.equal(w1.dataType, DataType.INT8);
  assert.deepEqual(m.initializers.find((t) => t.name === "w1_wscale")!.dims, [4], "one scale per output channel");
  assert.equal(m.initializers.find((t) => t.name === "b1_s32")!.dataType, DataType.INT32);
  assert.ok(!m.initializers.some((t) => t.name === "w1" || t.name === "w2"), "float weights dropped");

  const dir = mkdtempSync(join(tmpdir(), "pd-qstatic-"));
  try {
    const f = await openTinyVariant(tiny.entry, dir, "float.onnx", tiny.bytes, wasmDir);
    const q = await openTinyVariant(tiny.entry, dir, "static.onnx", a.bytes, wasmDir);
    let worst = 0;
    for (const s of [0, 5]) {
      const [x, y] = [await f.run(image(s)), await q.run(image(s))];
      worst = Math.max(worst, maskDifference(x, y));
    }
    assert.ok(worst <= 6, `largest mask difference ${worst}/255`);
    await f.dispose();
    await q.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
