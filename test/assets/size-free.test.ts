// The size-free rewrite (src/engine/assets/size-free.ts) on a tiny graph traced the way
// IS-Net is: at the traced size it gives the traced graph's mask exactly; at a smaller
// side it gives exactly what the same graph traced at that side gives; training-only
// outputs and the shape plumbing are gone; a graph it cannot rewrite faithfully is refused.
// The session side: a model with `sizes` takes those sides and refuses others.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseModel, writeModel } from "../../src/engine/assets/onnx-graph.ts";
import { readFields, fieldString } from "../../src/engine/assets/onnx-wire.ts";
import { hasSymbolicSize, makeSizeFree } from "../../src/engine/assets/size-free.ts";
import { deriveModel } from "../../src/engine/assets/derive.ts";
import type { ModelEntry } from "../../src/engine/inference/manifest.ts";
import type { MaskSession } from "../../src/engine/inference/session.ts";
import { maskDifference, openTinyVariant, tinyIsNetModel } from "../support/tiny-onnx.ts";
import { tracedIsNetModel } from "../support/traced-onnx.ts";

const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));
const TRACED = 32;
const base: ModelEntry = { ...tinyIsNetModel(TRACED, TRACED).entry, sizes: { multipleOf: 4, min: 8, max: TRACED } };

const outputNames = (bytes: Uint8Array) =>
  parseModel(bytes).graphFields.filter((f) => f.no === 12).map((f) => fieldString(readFields(f.bytes!).find((x) => x.no === 1)!));

function sizeFree(bytes: Uint8Array): Uint8Array {
  const m = parseModel(bytes);
  makeSizeFree(m, { keepOutputs: ["output"] });
  return writeModel(m);
}

/** A varied picture, the same at any size: smooth colour fields plus a disc. */
function picture(side: number): Uint8Array {
  const rgb = new Uint8Array(side * side * 3);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const [u, v] = [x / side, y / side];
      const inDisc = (u - 0.5) ** 2 + (v - 0.45) ** 2 < 0.08;
      const i = (y * side + x) * 3;
      rgb[i] = inDisc ? 220 : Math.round(255 * u);
      rgb[i + 1] = inDisc ? 40 : Math.round(255 * v);
      rgb[i + 2] = Math.round(128 + 100 * Math.sin(6 * u + 3 * v));
    }
  }
  return rgb;
}

test("the rewrite keeps the mask output only, without the shape plumbing, with a symbolic height and width", () => {
  const traced = tracedIsNetModel(TRACED);
  assert.deepEqual(outputNames(traced), ["output", "side"]);
  const free = parseModel(sizeFree(traced));
  assert.deepEqual(outputNames(writeModel(free)), ["output"]);
  assert.ok(hasSymbolicSize(free));
  assert.equal(hasSymbolicSize(parseModel(traced)), false);
  const ops = free.nodes.map((n) => n.opType);
  for (const gone of ["Shape", "Slice", "Constant"]) assert.ok(!ops.includes(gone), `${gone} left in the graph`);
  assert.equal(ops.filter((o) => o === "Resize").length, 2, "the side output's Resize went with it");
  assert.ok(!free.initializers.some((t) => t.name === "w_side"), "the side output's weights went with it");
});

test("a Resize that is not a whole factor at the traced size is refused", () => {
  assert.throws(() => sizeFree(tracedIsNetModel(TRACED, { brokenFactor: true })), /not a whole factor/);
});

test("derive's sizeFree step is the same rewrite, and needs keepOutputs", () => {
  const traced = tracedIsNetModel(TRACED);
  assert.deepEqual(deriveModel(traced, { sizeFree: { keepOutputs: ["output"] } }), sizeFree(traced));
  assert.throws(() => deriveModel(traced, { sizeFree: { keepOutputs: [] } }), /derive must be/);
  assert.throws(() => deriveModel(traced, { sizeFree: { keepOutputs: ["nope"] } }), /no graph output named nope/);
});

test("on WebAssembly: the traced size's mask is unchanged, and a smaller side's is what a graph traced at that side gives", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pd-size-free-"));
  const sessions: MaskSession[] = [];
  const open = async (file: string, bytes: Uint8Array, entry: ModelEntry) => {
    const s = await openTinyVariant(entry, dir, file, bytes, wasmDir);
    sessions.push(s);
    return s;
  };
  try {
    const fixed = { ...base, sizes: undefined };
    const free = await open("free.onnx", sizeFree(tracedIsNetModel(TRACED)), base);
    const traced32 = await open("traced32.onnx", tracedIsNetModel(TRACED), fixed);
    const traced16 = await open("traced16.onnx", tracedIsNetModel(16), { ...fixed, inputSize: [16, 16] });
    const [a, b] = [await free.run(picture(TRACED)), await traced32.run(picture(TRACED))];
    assert.equal(a.length, TRACED * TRACED);
    assert.equal(maskDifference(a, b), 0);
    const small = await free.run(picture(16), { width: 16, height: 16 });
    assert.equal(small.length, 16 * 16);
    assert.equal(maskDifference(small, await traced16.run(picture(16))), 0);
    assert.ok(new Set(small).size > 8, "a mask with detail, not a flat one that any graph would match");
    // Sides outside the model's sizes are refused before the graph runs.
    await assert.rejects(free.run(picture(12).subarray(0, 12 * 10 * 3), { width: 12, height: 10 }), /multiples of 4 from 8 to 32, not 12x10/);
    await assert.rejects(free.run(picture(36), { width: 36, height: 36 }), /not 36x36/);
    await assert.rejects(traced32.run(picture(16), { width: 16, height: 16 }), /takes only 32x32 input/);
  } finally {
    for (const s of sessions) await s.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every manifest model that is assembled here takes any side and returns only its mask", { skip: !readableModel() && "models/ not assembled (npm ci)" }, () => {
  const manifest = JSON.parse(readFileSync(new URL("../../models/manifest.json", import.meta.url), "utf8")) as { models: Record<string, ModelEntry> };
  const path = fileURLToPath(new URL(`../../models/${manifest.models["int8-static"]!.file}`, import.meta.url));
  const model = parseModel(new Uint8Array(readFileSync(path)));
  assert.ok(hasSymbolicSize(model));
  assert.deepEqual(outputNames(readFileSync(path)), ["output"]);
  for (const [name, e] of Object.entries(manifest.models)) assert.deepEqual(e.sizes, { multipleOf: 64, min: 64, max: 1024 }, name);
});

function readableModel(): boolean {
  try {
    readFileSync(new URL("../../models/manifest.json", import.meta.url));
    return true;
  } catch {
    return false;
  }
}
