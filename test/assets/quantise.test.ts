// The ONNX rewrite behind the derived int8 model: the wire format round-trips, weights
// quantise within half a step, and a quantised graph still runs and gives the float
// graph's mask (on the tiny IS-Net-shaped test graph, in milliseconds).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseModel, writeModel } from "../../src/engine/assets/onnx-graph.ts";
import { readFields, writeFields } from "../../src/engine/assets/onnx-wire.ts";
import { deriveQuantisedModel, quantiseWeights } from "../../src/engine/assets/quantise.ts";
import { maskDifference, openTinyVariant, tinyIsNetModel } from "../support/tiny-onnx.ts";

const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));

test("wire fields read and written back give the same bytes", () => {
  const bytes = tinyIsNetModel().bytes;
  assert.deepEqual(writeFields(readFields(bytes)), bytes);
});

test("a parsed model written back parses to the same nodes and initializers", () => {
  const a = parseModel(tinyIsNetModel().bytes);
  const b = parseModel(writeModel(a));
  assert.deepEqual(b.nodes, a.nodes);
  assert.deepEqual(b.initializers.map((t) => [t.name, t.dims, t.dataType, [...t.raw]]), a.initializers.map((t) => [t.name, t.dims, t.dataType, [...t.raw]]));
});

test("per-channel symmetric weights: codes 1..255 around 128, each within half a step of its weight", () => {
  const w = Float32Array.from([0.5, -0.25, 0.1, 0, 0.003, -0.002, 0.001, 0.0001, 0, 0, 0, 0]);
  const q = quantiseWeights(w, 3, { scales: "per-channel", symmetric: true });
  assert.equal(q.zeroPoint, 128);
  assert.equal(q.scales.length, 3);
  assert.equal(q.scales[2], 1, "an all-zero filter gets a harmless scale");
  for (let i = 0; i < w.length; i++) {
    const s = q.scales[Math.floor(i / 4)]!;
    assert.ok(q.codes[i]! >= 1 && q.codes[i]! <= 255);
    assert.ok(Math.abs((q.codes[i]! - 128) * s - w[i]!) <= s / 2 + 1e-9, `weight ${i}`);
  }
  // The small filter keeps its detail: a per-tensor scale would round it all to zero.
  assert.notEqual(q.codes[4], 128);
  const perTensor = quantiseWeights(w, 3, { scales: "per-tensor", symmetric: true });
  assert.equal(perTensor.codes[7], 128);
});

test("per-tensor asymmetric weights map zero exactly; per-channel asymmetric is refused (ConvInteger has one zero point)", () => {
  const w = Float32Array.from([0.9, 0.1, -0.3, 0]);
  const q = quantiseWeights(w, 2, { scales: "per-tensor", symmetric: false });
  assert.equal(q.codes[3], q.zeroPoint);
  for (let i = 0; i < w.length; i++) assert.ok(Math.abs((q.codes[i]! - q.zeroPoint) * q.scales[0]! - w[i]!) <= q.scales[0]! / 2 + 1e-9);
  assert.throws(() => quantiseWeights(w, 2, { scales: "per-channel", symmetric: false }), /one weight zero point/);
});

test("the quantised tiny graph runs on WebAssembly and its mask matches the float graph's", async () => {
  const tiny = tinyIsNetModel();
  const dir = mkdtempSync(join(tmpdir(), "pd-quant-"));
  try {
    const derived = deriveQuantisedModel(tiny.bytes, { scales: "per-channel", symmetric: true, keepFloat: [] });
    assert.equal(derived.quantised, 2);
    assert.ok(parseModel(derived.bytes).nodes.some((n) => n.opType === "ConvInteger"));
    const kept = deriveQuantisedModel(tiny.bytes, { scales: "per-channel", symmetric: true, keepFloat: ["Conv_h3"] });
    assert.deepEqual([kept.quantised, kept.float], [1, 1]);

    const f = await openTinyVariant(tiny.entry, dir, "float.onnx", tiny.bytes, wasmDir);
    const q = await openTinyVariant(tiny.entry, dir, "int8.onnx", derived.bytes, wasmDir);
    const rgb = new Uint8Array(64 * 64 * 3);
    for (let i = 0; i < rgb.length; i++) rgb[i] = (i * 37 + (i >> 7) * 11) & 255;
    const [a, b] = [await f.run(rgb), await q.run(rgb)];
    const worst = maskDifference(a, b);
    assert.ok(worst <= 6, `largest mask difference ${worst}/255`);
    await f.dispose();
    await q.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
