// A tiny ONNX model with IS-Net's contract, written field by field: one float32 input
// "input" [1, 3, H, W] (NCHW, normalised RGB) and one output "output" [1, 1, H, W] that
// ends in a sigmoid, so the manifest's "clamp" post-processing applies as it does to the
// real model. The graph is Conv 3x3 (3 → 4 channels, padded) → Relu → Conv 1x1 (4 → 1)
// → Sigmoid, with fixed weights: real convolutions on every backend, yet milliseconds
// even on a software GPU. The messages are written with the protobuf helpers the model
// assembly uses (src/engine/assets/onnx-wire.ts), field numbers from onnx.proto (ModelProto,
// GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto).
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelEntry } from "../../src/engine/inference/manifest.ts";
import { createMaskSession, type MaskSession } from "../../src/engine/inference/session.ts";
import { DataType } from "../../src/engine/assets/onnx-graph.ts";
import { bytesField, intField, msgField, strField, writeFields, type WireField } from "../../src/engine/assets/onnx-wire.ts";

export type Field = WireField;
const FLOAT = DataType.FLOAT;
const ATTR_INTS = 7; // AttributeProto.AttributeType.INTS

export function intsAttribute(name: string, values: number[]): Field[] {
  return [strField(1, name), ...values.map((v) => intField(8, v)), intField(20, ATTR_INTS)];
}

export function node(op: string, inputs: string[], outputs: string[], attributes: Field[][] = []): Field[] {
  return [
    ...inputs.map((i) => strField(1, i)),
    ...outputs.map((o) => strField(2, o)),
    strField(3, `${op}_${outputs[0]}`),
    strField(4, op),
    ...attributes.map((a) => msgField(5, a)),
  ];
}

export function initializer(name: string, dims: number[], values: number[]): Field[] {
  const raw = new Uint8Array(new Float32Array(values).buffer); // little-endian, as ONNX raw_data is
  return [...dims.map((d) => intField(1, d)), intField(2, FLOAT), strField(8, name), bytesField(9, raw)];
}

export function valueInfo(name: string, dims: number[]): Field[] {
  const shape = dims.map((d) => msgField(1, [intField(1, d)])); // Dimension.dim_value
  const tensorType = [intField(1, FLOAT), msgField(2, shape)];
  return [strField(1, name), msgField(2, [msgField(1, tensorType)])];
}

/** Fixed, varied weights: a deterministic sequence in [-1, 1). */
export function weights(count: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return ((s >>> 8) / 2 ** 24) * 2 - 1;
  });
}

export interface TinyModel {
  bytes: Uint8Array;
  /** A manifest entry for it, as models/manifest.json would hold (parsed by ModelEntrySchema). */
  entry: ModelEntry;
}

/**
 * The graph for a [height, width] input. `extraLayers` more Conv 3x3 (4 → 4) + Relu pairs
 * between the first Relu and the last Conv make each run cost what the caller needs
 * (a test that must catch inference in progress), with the same contract.
 */
export function tinyIsNetModel(height = 64, width = 64, extraLayers = 0): TinyModel {
  const hidden = 4;
  const pad3x3 = [intsAttribute("kernel_shape", [3, 3]), intsAttribute("pads", [1, 1, 1, 1])];
  const extraNodes: Field[] = [];
  const extraWeights: Field[] = [];
  let last = "h2";
  for (let i = 0; i < extraLayers; i++) {
    extraNodes.push(msgField(1, node("Conv", [last, `wx${i}`, `bx${i}`], [`x${i}c`], pad3x3)), msgField(1, node("Relu", [`x${i}c`], [`x${i}`])));
    extraWeights.push(
      msgField(5, initializer(`wx${i}`, [hidden, hidden, 3, 3], weights(hidden * hidden * 9, 17 + i).map((w) => w * 0.3))),
      msgField(5, initializer(`bx${i}`, [hidden], weights(hidden, 19 + i))),
    );
    last = `x${i}`;
  }
  const graph: Field[] = [
    msgField(1, node("Conv", ["input", "w1", "b1"], ["h1"], pad3x3)),
    msgField(1, node("Relu", ["h1"], ["h2"])),
    ...extraNodes,
    msgField(1, node("Conv", [last, "w2", "b2"], ["h3"], [intsAttribute("kernel_shape", [1, 1])])),
    msgField(1, node("Sigmoid", ["h3"], ["output"])),
    strField(2, "tiny-isnet"),
    msgField(5, initializer("w1", [hidden, 3, 3, 3], weights(hidden * 27, 7))),
    msgField(5, initializer("b1", [hidden], weights(hidden, 11))),
    msgField(5, initializer("w2", [1, hidden, 1, 1], weights(hidden, 13).map((w) => w * 3))),
    msgField(5, initializer("b2", [1], [0.1])),
    ...extraWeights,
    msgField(11, valueInfo("input", [1, 3, height, width])),
    msgField(12, valueInfo("output", [1, 1, height, width])),
  ];
  const model: Field[] = [
    intField(1, 8), // ir_version 8 (ONNX 1.10+)
    strField(2, "pixeldrop-test"),
    msgField(7, graph),
    msgField(8, [strField(1, ""), intField(2, 13)]), // opset_import: ai.onnx 13
  ];
  const bytes = writeFields(model);
  return {
    bytes,
    entry: {
      file: "tiny-isnet.onnx",
      sha256: createHash("sha256").update(bytes).digest("hex"),
      bytes: bytes.length,
      precision: "float32 weights, input and output",
      autoBackend: "any",
      inputName: "input",
      outputName: "output",
      inputSize: [height, width],
      mean: [0.5, 0.5, 0.5],
      std: [1, 1, 1],
      layout: "NCHW",
      postprocess: "clamp",
      licence: "Apache-2.0 (generated by the tests)",
    },
  };
}

export interface TinyModelDir {
  dir: string;
  /** The .onnx file, described by the manifest.json beside it (what a caller passes as `model`). */
  path: string;
  model: TinyModel;
  remove(): void;
}

/**
 * The tiny model written to a temp folder of its own with a manifest.json listing it as
 * "tiny": for tests of what the engine does around the model (options, abort, inputs,
 * workers, exit), where IS-Net's seconds per run would buy nothing.
 */
export function writeTinyModel(height = 64, width = 64, extraLayers = 0): TinyModelDir {
  const dir = mkdtempSync(join(tmpdir(), "pd-tiny-model-"));
  const model = tinyIsNetModel(height, width, extraLayers);
  const path = join(dir, model.entry.file);
  writeFileSync(path, model.bytes);
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({ version: 1, models: { tiny: model.entry } }));
  return { dir, path, model, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A WebAssembly mask session (1 thread) on `bytes`, a variant of the tiny model (the same
 * contract, other weights or operators), written to `dir`/`file` with `base`'s entry
 * re-hashed for it: how the quantiser tests run a rewritten graph beside its float one.
 */
export function openTinyVariant(base: ModelEntry, dir: string, file: string, bytes: Uint8Array, wasmDir: string): Promise<MaskSession> {
  writeFileSync(join(dir, file), bytes);
  const model: ModelEntry = { ...base, file, sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length };
  return createMaskSession({
    model,
    modelPath: join(dir, file),
    backend: "wasm",
    threads: 1,
    wasmDir,
  });
}

/** The largest difference between two masks of the same size, in levels of 255: how the tests compare a model's variants or backends. */
export function maskDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new RangeError(`masks of ${a.length} and ${b.length} values`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}
