// Which backend a session starts on: "auto" takes a hardware GPU only for models whose
// manifest entry allows it (the quantised ones run 17x slower on WebGPU than on WebAssembly:
// docs/MODEL.md, "WebGPU on a real GPU"), and every package model says which it is.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ortWebSessionOptions, startsOnGpu } from "../../src/engine/inference/backend-ort-web.ts";
import { loadManifest, parseManifest } from "../../src/engine/inference/manifest.ts";

const gpu = async () => true;
const noGpu = async () => false;
const unasked = async (): Promise<boolean> => assert.fail("the adapter was asked for although the answer did not depend on it");

test("auto uses a hardware GPU for a model marked any, WebAssembly for one marked cpu", async () => {
  assert.equal(await startsOnGpu("auto", { autoBackend: "any" }, gpu), true);
  assert.equal(await startsOnGpu("auto", { autoBackend: "any" }, noGpu), false);
  assert.equal(await startsOnGpu("auto", { autoBackend: "cpu" }, unasked), false);
});

test("an explicit backend is what runs, whatever the model's entry says", async () => {
  assert.equal(await startsOnGpu("webgpu", { autoBackend: "cpu" }, unasked), true);
  assert.equal(await startsOnGpu("wasm", { autoBackend: "any" }, unasked), false);
});

test("the package's quantised models stay on the CPU under auto; an entry without the field may use a GPU", async () => {
  const loaded = await loadManifest(new URL("../../models/manifest.json", import.meta.url).pathname);
  assert.ok(loaded.ok);
  const marks = Object.fromEntries(Object.entries(loaded.manifest.models).map(([name, e]) => [name, e.autoBackend]));
  assert.deepEqual(marks, { "int8-static": "cpu", "int8-static-gpu": "any", "int8-static-gpu-f16": "any", small: "cpu", medium: "any", int8: "cpu" });
  const plain = parseManifest({ version: 1, models: { own: { ...loaded.manifest.models.medium, autoBackend: undefined } } });
  assert.ok(plain.ok);
  assert.equal(plain.manifest.models.own!.autoBackend, "any");
});

// The memory pattern's block costs a second run its fresh pages and a serving worker
// 40-55 MiB (docs/MODEL.md, "Memory"); the GPU provider keeps ORT's default.
test("WebAssembly sessions run without ORT's memory pattern; WebGPU sessions keep the default", () => {
  assert.equal(ortWebSessionOptions("wasm").enableMemPattern, false);
  assert.equal(ortWebSessionOptions("webgpu").enableMemPattern, undefined);
  assert.equal(ortWebSessionOptions("wasm").enableCpuMemArena, true);
});
