import { test } from "node:test";
import assert from "node:assert/strict";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { ellipseMask } from "../../src/engine/inference/backend-stub.ts";
import type { ModelEntry } from "../../src/engine/inference/manifest.ts";

const model: ModelEntry = {
  file: "none.onnx",
  sha256: "0".repeat(64),
  bytes: 1,
  precision: "none",
  autoBackend: "any",
  inputName: "input",
  outputName: "output",
  inputSize: [60, 80], // [h, w]
  mean: [0.5, 0.5, 0.5],
  std: [1, 1, 1],
  layout: "NCHW",
  postprocess: "clamp",
  licence: "none",
};

test("stub session: centred ellipse at the model's input size, never touching the model file", async () => {
  const s = await createMaskSession({ model, modelPath: "/does/not/exist.onnx", backend: "stub", threads: 1, wasmDir: "/nowhere" });
  assert.equal(s.backend, "stub");
  assert.deepEqual(s.inputSize, { width: 80, height: 60 });
  const mask = await s.run(new Uint8Array(80 * 60 * 3));
  assert.equal(mask.length, 80 * 60);
  assert.equal(mask[30 * 80 + 40], 255); // centre
  assert.equal(mask[0], 0); // corner
  assert.equal(mask[30 * 80 + 2], 0); // left edge, outside the 35% half-width
  // symmetric left/right
  for (let x = 0; x < 80; x++) assert.equal(mask[30 * 80 + x], mask[30 * 80 + 79 - x]);
  await s.dispose();
});

test("stub session: wrong input size fails with inference_failed", async () => {
  const s = await createMaskSession({ model, modelPath: "", backend: "stub", threads: 1, wasmDir: "" });
  await assert.rejects(s.run(new Uint8Array(10)), (err: unknown) => (err as { code?: string }).code === "inference_failed");
});

test("stub session waits stubDelayMs per run", async () => {
  const s = await createMaskSession({ model, modelPath: "", backend: "stub", threads: 1, wasmDir: "", stubDelayMs: 30 });
  let settled = false;
  const run = s.run(new Uint8Array(80 * 60 * 3)).then(() => (settled = true));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(settled, false);
  await run;
  assert.equal(settled, true);
});

test("ellipseMask covers roughly the ellipse's area with a soft edge", () => {
  const m = ellipseMask(200, 100);
  let sum = 0;
  let partial = 0;
  for (const v of m) {
    sum += v / 255;
    if (v > 0 && v < 255) partial++;
  }
  const expected = Math.PI * 70 * 42; // semi-axes 0.35*200 and 0.42*100
  assert.ok(Math.abs(sum - expected) / expected < 0.03, `area ${sum} vs ${expected}`);
  assert.ok(partial > 0);
});
