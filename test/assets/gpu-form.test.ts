// The GPU form of the static int8 model (src/engine/assets/dequantise-float.ts): made from
// the static model's file as it is on disk (no data package), sha256-checked like every
// model, with no operator left that only the CPU provider runs. test/deno/webgpu_test.ts
// runs it on WebGPU and reads ORT's node placement.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AssembleError, assembleAssets, type AssetManifest } from "../../src/engine/assets/assemble.ts";
import { deriveModel } from "../../src/engine/assets/derive.ts";
import { dequantiseToFloat } from "../../src/engine/assets/dequantise-float.ts";
import { DataType, parseModel } from "../../src/engine/assets/onnx-graph.ts";
import { takesBatches } from "../../src/engine/assets/gpu-graph.ts";
import { PACKAGE_MODELS_DIR } from "../../src/engine/assets/paths.ts";
import { loadManifest, type ModelEntry } from "../../src/engine/inference/manifest.ts";
import { gpuFormName, modelForBackend } from "../../src/engine/inference/gpu-form.ts";
import { tinyIsNetModel } from "../support/tiny-onnx.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const STATIC = { keepFloat: [], ranges: { input: [-0.5, 0.5], h2: [0, 4] } };
const SOURCE = { package: "@imgly/background-removal-data", version: "9.9.9", resource: "/models/tiny" };

/** A models folder holding only the static tiny model, and a manifest with its GPU form. */
function staticOnly(gpuSha?: string) {
  const dir = mkdtempSync(join(tmpdir(), "pd-gpu-form-"));
  const stat = deriveModel(tinyIsNetModel(32, 32).bytes, { quantiseStatic: STATIC });
  const gpu = dequantiseToFloat(stat).bytes;
  writeFileSync(join(dir, "static.onnx"), stat);
  const manifest: AssetManifest = {
    models: {
      static: { file: "static.onnx", sha256: sha(stat), bytes: stat.length, source: SOURCE },
      gpu: { file: "gpu.onnx", sha256: gpuSha ?? sha(gpu), bytes: gpu.length, source: SOURCE, gpuFormOf: "static" },
    },
  };
  return { dir, gpu, manifest, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test("the GPU form is made from the static model's file alone, with no data package installed", async () => {
  const p = staticOnly();
  try {
    // The anchor has no node_modules: nothing can come from a package.
    const written = await assembleAssets({ anchor: p.dir, manifest: p.manifest, modelsDir: p.dir, wasmDir: p.dir, models: ["gpu"], runtimes: [] });
    assert.equal(written, 1);
    assert.deepEqual(new Uint8Array(readFileSync(join(p.dir, "gpu.onnx"))), p.gpu);
    // Intact now: a second call writes nothing.
    assert.equal(await assembleAssets({ anchor: p.dir, manifest: p.manifest, modelsDir: p.dir, wasmDir: p.dir, models: ["gpu"], runtimes: [] }), 0);
  } finally {
    p.cleanup();
  }
});

test("a GPU form goes to another folder (a cache) when its source lies read-only in the package's", async () => {
  const p = staticOnly();
  const cache = mkdtempSync(join(tmpdir(), "pd-gpu-cache-"));
  try {
    await assembleAssets({ anchor: p.dir, manifest: p.manifest, modelsDir: cache, wasmDir: cache, sourceDirs: [p.dir], models: ["gpu"], runtimes: [] });
    assert.deepEqual(new Uint8Array(readFileSync(join(cache, "gpu.onnx"))), p.gpu);
    assert.equal(existsSync(join(cache, "static.onnx")), false, "the source is read where it is, not copied or rebuilt");
  } finally {
    p.cleanup();
    rmSync(cache, { recursive: true, force: true });
  }
});

test("a GPU form whose bytes differ from the manifest's sha256 is an error, and no file is left", async () => {
  const p = staticOnly("0".repeat(64));
  try {
    await assert.rejects(
      assembleAssets({ anchor: p.dir, manifest: p.manifest, modelsDir: p.dir, wasmDir: p.dir, models: ["gpu"], runtimes: [] }),
      (err: Error) => err instanceof AssembleError && /derived sha256 [0-9a-f]{64} .* from static\.onnx does not match manifest 0{64}/.test(err.message),
    );
    assert.equal(existsSync(join(p.dir, "gpu.onnx")), false);
    assert.deepEqual(readdirSync(p.dir).filter((f) => f.includes(".tmp-")), []);
  } finally {
    p.cleanup();
  }
});

test("the default model's GPU forms: no quantise step, no shape operator, every Resize sized by a constant, a batch dim, the manifest's bytes", async (t) => {
  const loaded = await loadManifest(join(PACKAGE_MODELS_DIR, "manifest.json"));
  assert.ok(loaded.ok);
  assert.equal(gpuFormName(loaded.manifest, "int8-static"), "int8-static-gpu");
  assert.equal(gpuFormName(loaded.manifest, "int8-static", ["shader-f16"]), "int8-static-gpu-f16");
  const from = loaded.manifest.models["int8-static"]!;
  const path = join(PACKAGE_MODELS_DIR, from.file);
  if (!existsSync(path)) return t.skip(`${path} is not assembled (npm ci)`);
  const source = new Uint8Array(readFileSync(path));
  for (const [name, activations] of [["int8-static-gpu", "float32"], ["int8-static-gpu-f16", "float16"]] as const) {
    const entry: ModelEntry = loaded.manifest.models[name]!;
    assert.equal(entry.gpuActivations ?? "float32", activations);
    const form = dequantiseToFloat(source, activations);
    const model = parseModel(form.bytes);
    const ops = new Set(model.nodes.map((n) => n.opType));
    for (const op of ["QuantizeLinear", "DequantizeLinear", "Shape", "Slice", "Gather"]) assert.ok(!ops.has(op), `${name}: ${op} is left`);
    const inits = new Map(model.initializers.map((x) => [x.name, x]));
    const resizes = model.nodes.filter((n) => n.opType === "Resize");
    assert.ok(resizes.length > 30);
    for (const r of resizes) assert.ok(inits.has(r.inputs[3] ?? r.inputs[2]!), `${name}: ${r.name} reads a computed size`);
    assert.ok(takesBatches(model), `${name}: the input's first dim is named`);
    // float16 activations: no float32 tensor is computed with but the Resizes' scales.
    const float32 = model.nodes.flatMap((n) => n.inputs.filter((i, slot) => inits.get(i)?.dataType === DataType.FLOAT && !(n.opType === "Resize" && slot >= 1)));
    assert.equal(float32.length === 0, activations === "float16", `${name}: float32 initializers read: ${float32.length}`);
    assert.equal(form.bytes.length, entry.bytes, `the manifest's bytes for ${name}`);
    assert.equal(sha(form.bytes), entry.sha256, `the manifest's sha256 for ${name} (derived from the int8-static file on disk)`);
  }
});

test("auto takes the GPU form only with a hardware adapter; other backends keep the model asked for", async () => {
  const loaded = await loadManifest(join(PACKAGE_MODELS_DIR, "manifest.json"));
  assert.ok(loaded.ok);
  const m = loaded.manifest;
  const facts = { vendor: "4318", architecture: "", device: "", description: "a GPU", software: false, features: [] as string[] };
  const gpu = async () => facts;
  const gpuF16 = async () => ({ ...facts, features: ["shader-f16"] });
  const software = async () => ({ ...facts, description: "llvmpipe", software: true, features: ["shader-f16"] });
  // Node has no navigator.gpu: auto never asks for an adapter there.
  const nav = globalThis as { navigator?: { gpu?: unknown } };
  const hadNavigator = nav.navigator !== undefined;
  const hadGpu = hadNavigator && "gpu" in nav.navigator!;
  const saved = nav.navigator?.gpu;
  if (hadNavigator) Object.defineProperty(nav.navigator, "gpu", { value: {}, configurable: true });
  else Object.defineProperty(globalThis, "navigator", { value: { gpu: {} }, configurable: true });
  try {
    assert.equal(await modelForBackend(m, "int8-static", "auto", gpu), "int8-static-gpu");
    assert.equal(await modelForBackend(m, "int8-static", "auto", gpuF16), "int8-static-gpu-f16");
    assert.equal(await modelForBackend(m, "int8-static", "auto", software), "int8-static");
    assert.equal(await modelForBackend(m, "int8-static", "wasm", gpu), "int8-static");
    assert.equal(await modelForBackend(m, "int8-static", "webgpu", gpu), "int8-static");
    assert.equal(await modelForBackend(m, "medium", "auto", gpu), "medium");
  } finally {
    if (!hadNavigator) delete nav.navigator;
    else if (hadGpu) Object.defineProperty(nav.navigator!, "gpu", { value: saved, configurable: true });
    else delete (nav.navigator as { gpu?: unknown }).gpu;
  }
});
