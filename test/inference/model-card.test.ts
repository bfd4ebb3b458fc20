// The model card's parts without a session: the schema (errors name the field), the
// presets and the package's manifest entries as cards, the tensor's layout, channel order
// and scale, the activation, the graph reader on real and tiny files, and the start-up
// check of a card against a graph.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readGraphIo } from "../../src/engine/assets/onnx-io.ts";
import { PACKAGE_MODELS_DIR } from "../../src/engine/assets/paths.ts";
import { DataType } from "../../src/engine/assets/onnx-graph.ts";
import { intField, msgField, strField, writeFields } from "../../src/engine/assets/onnx-wire.ts";
import { cardFromDocument, PRESET_NAMES, presetCard } from "../../src/engine/inference/card-presets.ts";
import { bindCard, type GraphIo } from "../../src/engine/inference/graph-contract.ts";
import { ModelCardSchema, parseCard } from "../../src/engine/inference/model-card.ts";
import { outputToMask, rgbToTensor } from "../../src/engine/inference/tensor.ts";
import { familyGraph } from "../support/family-onnx.ts";
import { initializer, node } from "../support/tiny-onnx.ts";

test("every preset is a valid card, and every manifest entry is one with the file's facts added", () => {
  for (const name of PRESET_NAMES) assert.doesNotThrow(() => presetCard(name), name);
  const manifest = JSON.parse(readFileSync(join(PACKAGE_MODELS_DIR, "manifest.json"), "utf8")) as { models: Record<string, Record<string, unknown>> };
  for (const [name, entry] of Object.entries(manifest.models)) {
    const { file: _f, sha256: _s, bytes: _b, source: _o, precision: _p, derive: _d, gpuFormOf: _g, gpuActivations: _a, ...card } = entry;
    const parsed = ModelCardSchema.safeParse(card);
    assert.ok(parsed.success, `${name}: ${parsed.error?.message}`);
  }
});

test("a card's errors name the field; unknown fields are refused; a preset is a starting point", () => {
  const base = { inputSize: [64, 64], mean: [0, 0, 0], std: [1, 1, 1], licence: "ours" };
  assert.ok(parseCard(base, "x").ok);
  const bad = parseCard({ ...base, std: [1, 0, 1], layout: "CHW", scale: 256 }, "card.json");
  assert.ok(!bad.ok);
  assert.match(bad.message, /^invalid model card card\.json: /);
  for (const field of ["std", "layout", "scale"]) assert.match(bad.message, new RegExp(`(^|; |: )${field}: `), field);
  const typo = parseCard({ ...base, activaton: "sigmoid" }, "x");
  assert.ok(!typo.ok && /activaton/.test(typo.message));
  const sizes = parseCard({ ...base, sizes: { multipleOf: 32, min: 64, max: 48 } }, "x");
  assert.ok(!sizes.ok && /sizes\.min: min 64 is above max 48/.test(sizes.message) && /sizes\.max: 48 is not a multiple of 32/.test(sizes.message));
  const outside = parseCard({ ...base, inputSize: [64, 96], sizes: { multipleOf: 32, min: 32, max: 64 } }, "x");
  assert.ok(!outside.ok && /inputSize\.1: 96 is not one of the sizes/.test(outside.message));
  const fromPreset = cardFromDocument({ preset: "modnet", inputSize: [256, 256] }, "x");
  assert.ok(fromPreset.ok);
  assert.deepEqual(fromPreset.card.inputSize, [256, 256]);
  assert.deepEqual(fromPreset.card.std, [0.5, 0.5, 0.5]);
  assert.deepEqual(fromPreset.card.sizes, { multipleOf: 32, min: 32, max: 2048 });
});

test("rgbToTensor: NHWC interleaves, BGR reverses the channels, scale max divides by the picture's largest value", () => {
  const rgb = new Uint8Array([100, 50, 0, 200, 150, 100]); // two pixels
  const nchw = rgbToTensor(rgb, 2, 1, { mean: [0, 0, 0], std: [1, 1, 1] });
  assert.deepEqual([...nchw].map((v) => Math.round(v * 255)), [100, 200, 50, 150, 0, 100]);
  const nhwc = rgbToTensor(rgb, 2, 1, { mean: [0, 0, 0], std: [1, 1, 1], layout: "NHWC" });
  assert.deepEqual([...nhwc].map((v) => Math.round(v * 255)), [100, 50, 0, 200, 150, 100]);
  const bgr = rgbToTensor(rgb, 2, 1, { mean: [0, 0, 0], std: [1, 1, 1], channels: "BGR" });
  assert.deepEqual([...bgr].map((v) => Math.round(v * 255)), [0, 100, 50, 150, 100, 200]);
  const byMax = rgbToTensor(rgb, 2, 1, { mean: [0, 0, 0], std: [1, 1, 1], scale: "max" });
  assert.deepEqual([...byMax].map((v) => Math.round(v * 200)), [100, 200, 50, 150, 0, 100]);
  // Mean and std apply in the graph's channel order.
  const bgrNorm = rgbToTensor(new Uint8Array([255, 0, 51]), 1, 1, { mean: [0.2, 0, 0], std: [0.5, 1, 1], channels: "BGR" });
  assert.deepEqual([...bgrNorm].map((v) => +v.toFixed(4)), [0, 0, 1]);
  assert.deepEqual([...rgbToTensor(new Uint8Array(3), 1, 1, { mean: [0, 0, 0], std: [1, 1, 1], scale: "max" })], [0, 0, 0], "all black: no division by zero");
});

test("outputToMask: sigmoid maps logits; auto applies it only to an output that leaves [0, 1]", () => {
  assert.deepEqual([...outputToMask(new Float32Array([0, 100, -100]), "clamp", "sigmoid")], [128, 255, 0]);
  assert.deepEqual([...outputToMask(new Float32Array([0, 0.5, 1]), "clamp", "auto")], [0, 128, 255], "probabilities stay");
  assert.deepEqual([...outputToMask(new Float32Array([0, 0.5, 1.5]), "clamp", "auto")], [128, 159, 208], "one value outside: all are logits");
  assert.deepEqual([...outputToMask(new Float32Array([-2, 0, 2]), "minmax", "sigmoid")], [0, 127, 255]);
});

test("readGraphIo: the package model's input and its one output (size-free: symbolic height and width), and weights listed as inputs left out", async () => {
  const io = await readGraphIo(join(PACKAGE_MODELS_DIR, "isnet-int8-static.onnx"));
  assert.deepEqual(io.inputs, [{ name: "input", elemType: DataType.FLOAT, dims: [1, 3, "height", "width"] }]);
  assert.deepEqual(io.outputs, [{ name: "output", elemType: DataType.FLOAT, dims: [1, 1, "height", "width"] }]);

  const dir = mkdtempSync(join(tmpdir(), "pd-graph-io-"));
  try {
    const dynamic = join(dir, "dynamic.onnx");
    writeFileSync(dynamic, familyGraph({ inputName: "input", size: "dynamic", outputs: ["output"], logits: false }));
    assert.deepEqual((await readGraphIo(dynamic)).inputs[0]!.dims, [1, 3, "height", "width"]);

    // An IR 3 graph lists its weights among the inputs too.
    const value = (name: string, dims: number[]) =>
      msgField(11, [strField(1, name), msgField(2, [msgField(1, [intField(1, DataType.FLOAT), msgField(2, dims.map((d) => msgField(1, [intField(1, d)])))])])]);
    const old = join(dir, "old.onnx");
    const graph = [
      msgField(1, node("Add", ["x", "w"], ["y"])),
      msgField(5, initializer("w", [1], [1])),
      value("x", [1, 3, 8, 8]),
      value("w", [1]),
      msgField(12, [strField(1, "y")]),
    ];
    writeFileSync(old, writeFields([intField(1, 3), msgField(7, graph)]));
    const io2 = await readGraphIo(old);
    assert.deepEqual(io2.inputs.map((i) => i.name), ["x"]);
    assert.deepEqual(io2.outputs, [{ name: "y", elemType: 0, dims: undefined }]);

    const junk = join(dir, "junk.onnx");
    writeFileSync(junk, new Uint8Array([0x3a, 0xff, 0xff, 0x01]));
    await assert.rejects(readGraphIo(junk), /runs past the message|truncated/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bindCard: names filled in from the graph; each difference named", () => {
  const io: GraphIo = {
    inputs: [{ name: "pixels", elemType: 1, dims: [1, 64, 64, 3] }],
    outputs: [
      { name: "mask", elemType: 1, dims: [1, 64, 64, 1] },
      { name: "edges", elemType: 1, dims: [1, 64, 64, 1] },
    ],
  };
  const card = { ...presetCard("isnet"), inputSize: [64, 64] as [number, number] };
  const nhwc = bindCard({ ...card, layout: "NHWC", outputIndex: 1 }, io);
  assert.ok(nhwc.ok);
  assert.equal(nhwc.model.inputName, "pixels");
  assert.equal(nhwc.model.outputName, "edges");
  const nchw = bindCard(card, io);
  assert.ok(!nchw.ok);
  assert.match(nchw.problems.join("\n"), /layout NCHW: input "pixels" \[1, 64, 64, 3\] has 64 at the channel position \(dim 1\), not 3/);
  const two = bindCard(card, { inputs: [io.inputs[0]!, { name: "mask_prior", elemType: 1, dims: [1, 1, 64, 64] }], outputs: io.outputs });
  assert.ok(!two.ok && /inputName: the card names none, and the graph has 2 inputs/.test(two.problems[0]!));
  const ints = bindCard({ ...card, layout: "NHWC", outputName: "alpha" }, { inputs: [{ ...io.inputs[0]!, elemType: DataType.UINT8 }], outputs: io.outputs });
  assert.ok(!ints.ok);
  assert.match(ints.problems.join("\n"), /element type 2, not float32/);
  assert.match(ints.problems.join("\n"), /outputName "alpha": the graph has no such output \(its outputs: "mask" \[1, 64, 64, 1\], "edges" \[1, 64, 64, 1\]\)/);
});
