import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadManifest, parseManifest, resolveModel, type ModelEntry, type ModelManifest } from "../../src/engine/inference/manifest.ts";

const repoModels = fileURLToPath(new URL("../../models/", import.meta.url));

function entry(file: string, bytes: Uint8Array): ModelEntry {
  return {
    file,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    bytes: bytes.length,
    precision: "test",
    autoBackend: "any",
    inputName: "input",
    outputName: "output",
    inputSize: [8, 8],
    mean: [0.5, 0.5, 0.5],
    std: [1, 1, 1],
    layout: "NCHW",
    postprocess: "clamp",
    licence: "test",
  };
}

/** A models dir with two fake .onnx files (resolution never parses them). */
function fakeModels() {
  const dir = mkdtempSync(join(tmpdir(), "pd-manifest-"));
  const a = new Uint8Array([1, 2, 3, 4]);
  const b = new Uint8Array([9, 9, 9]);
  writeFileSync(join(dir, "tiny-a.onnx"), a);
  writeFileSync(join(dir, "tiny-b.onnx"), b);
  const manifest: ModelManifest = { version: 1, models: { a: entry("tiny-a.onnx", a), b: entry("tiny-b.onnx", b) } };
  writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest));
  return { dir, manifest, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test("the committed manifest is valid and describes both IS-Net models", async () => {
  const loaded = await loadManifest(join(repoModels, "manifest.json"));
  if (!loaded.ok) return assert.fail(loaded.title);
  const models = loaded.manifest.models;
  for (const name of ["small", "medium"]) {
    const m = models[name];
    assert.ok(m, `manifest entry ${name}`);
    assert.deepEqual(m.inputSize, [1024, 1024]);
    assert.deepEqual(m.mean, [0.5, 0.5, 0.5]);
    assert.deepEqual(m.std, [1, 1, 1]);
    assert.equal(m.outputName, "output");
    assert.equal(m.source?.package, "@imgly/background-removal-data");
  }
});

test("named models resolve to the models dir (the assembled real files)", { skip: !existsSync(join(repoModels, "isnet-small.onnx")) }, async () => {
  const r = await resolveModel({ model: "small", modelsDir: repoModels });
  assert.ok(r.ok, r.ok ? "" : r.title);
  assert.equal(r.name, "small");
  assert.equal(r.path, join(repoModels, "isnet-small.onnx"));
});

test("a name not in the manifest fails with model_unavailable and lists the names", async () => {
  const f = fakeModels();
  try {
    const r = await resolveModel({ model: "large", modelsDir: f.dir });
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.code, "model_unavailable");
    assert.match(r.title, /unknown model "large".*a, b/);
  } finally {
    f.cleanup();
  }
});

test("a named model whose file is missing or the wrong size is refused", async () => {
  const f = fakeModels();
  try {
    rmSync(join(f.dir, "tiny-a.onnx"));
    const missing = await resolveModel({ model: "a", modelsDir: f.dir });
    assert.ok(!missing.ok && /missing/.test(missing.title));
    writeFileSync(join(f.dir, "tiny-b.onnx"), new Uint8Array([9, 9]));
    const short = await resolveModel({ model: "b", modelsDir: f.dir });
    assert.ok(!short.ok && /does not match/.test(short.title));
  } finally {
    f.cleanup();
  }
});

test("verify: a named model with the right size but other bytes is refused", async () => {
  const f = fakeModels();
  try {
    writeFileSync(join(f.dir, "tiny-b.onnx"), new Uint8Array([9, 9, 8]));
    assert.equal((await resolveModel({ model: "b", modelsDir: f.dir })).ok, true); // size only
    assert.equal((await resolveModel({ model: "b", modelsDir: f.dir, verify: true })).ok, false);
  } finally {
    f.cleanup();
  }
});

test("a path resolves by file name when its sha256 matches the entry", async () => {
  const f = fakeModels();
  try {
    const r = await resolveModel({ model: join(f.dir, "tiny-b.onnx"), modelsDir: f.dir, manifest: f.manifest });
    assert.ok(r.ok);
    assert.equal(r.name, "b");
  } finally {
    f.cleanup();
  }
});

test("a path with another name resolves by sha256", async () => {
  const f = fakeModels();
  try {
    writeFileSync(join(f.dir, "renamed.onnx"), new Uint8Array([1, 2, 3, 4]));
    const r = await resolveModel({ model: join(f.dir, "renamed.onnx"), modelsDir: f.dir });
    assert.ok(r.ok);
    assert.equal(r.name, "a");
    assert.equal(r.path, join(f.dir, "renamed.onnx"));
  } finally {
    f.cleanup();
  }
});

test("bad paths: missing file, same name but different bytes, unknown bytes", async () => {
  const f = fakeModels();
  try {
    const missing = await resolveModel({ model: join(f.dir, "nope.onnx"), modelsDir: f.dir });
    assert.ok(!missing.ok && /does not exist/.test(missing.title));

    const other = mkdtempSync(join(tmpdir(), "pd-manifest-other-"));
    writeFileSync(join(other, "tiny-a.onnx"), new Uint8Array([4, 3, 2, 1]));
    const sameName = await resolveModel({ model: join(other, "tiny-a.onnx"), modelsDir: f.dir });
    assert.ok(!sameName.ok && /named like manifest entry "a"/.test(sameName.title));

    writeFileSync(join(other, "mystery.onnx"), new Uint8Array([7]));
    const unknown = await resolveModel({ model: join(other, "mystery.onnx"), modelsDir: f.dir });
    assert.ok(!unknown.ok);
    assert.equal(unknown.code, "model_unavailable");
    assert.match(unknown.title, /no manifest entry/);
    rmSync(other, { recursive: true, force: true });
  } finally {
    f.cleanup();
  }
});

test("a path outside the models dir resolves by the manifest.json beside it, first; a broken one is reported", async () => {
  const f = fakeModels();
  const own = mkdtempSync(join(tmpdir(), "pd-manifest-own-"));
  try {
    // Named like the package's entry "a", other bytes: the description beside it wins.
    const bytes = new Uint8Array([5, 6, 7]);
    writeFileSync(join(own, "tiny-a.onnx"), bytes);
    writeFileSync(join(own, "manifest.json"), JSON.stringify({ version: 1, models: { mine: { ...entry("tiny-a.onnx", bytes), inputSize: [16, 32] } } }));
    const r = await resolveModel({ model: join(own, "tiny-a.onnx"), modelsDir: f.dir });
    assert.ok(r.ok, r.ok ? "" : r.title);
    assert.equal(r.name, "mine");
    assert.deepEqual(r.entry.inputSize, [16, 32]);
    // A file that the folder's manifest does not list still resolves by the package's, by sha256.
    writeFileSync(join(own, "copy.onnx"), new Uint8Array([9, 9, 9]));
    const byPackage = await resolveModel({ model: join(own, "copy.onnx"), modelsDir: f.dir });
    assert.ok(byPackage.ok && byPackage.name === "b");
    writeFileSync(join(own, "manifest.json"), "{ not json");
    const broken = await resolveModel({ model: join(own, "tiny-a.onnx"), modelsDir: f.dir });
    assert.ok(!broken.ok && /cannot read model manifest/.test(broken.title));
  } finally {
    rmSync(own, { recursive: true, force: true });
    f.cleanup();
  }
});

test("invalid manifests are reported with the offending field", () => {
  const r = parseManifest({ version: 1, models: { x: { file: "../escape.onnx", sha256: "zz" } } });
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.title, /models\.x\.file[\s\S]*models\.x\.sha256|models\.x\.sha256[\s\S]*models\.x\.file/);
});
