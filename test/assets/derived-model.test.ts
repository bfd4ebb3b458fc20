// A model derived at assemble time (a manifest entry with `derive`): built from its
// source resource's verified chunks, quantised by src/engine/assets/quantise.ts (dynamic)
// or quantise-static.ts (static, ranges in the spec), and checked by the entry's sha256
// like every other model. Runs scripts/assemble-models.mjs on a
// throwaway project whose data package holds the tiny IS-Net-shaped test graph.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ORT_RUNTIME_FILES } from "../../src/engine/assets/assemble.ts";
import { checkDeriveSpec, deriveModel } from "../../src/engine/assets/derive.ts";
import type { QuantiseOptions } from "../../src/engine/assets/quantise.ts";
import { tinyIsNetModel } from "../support/tiny-onnx.ts";

const script = fileURLToPath(new URL("../../scripts/assemble-models.mjs", import.meta.url));
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const QUANTISE: QuantiseOptions = { scales: "per-channel", symmetric: true, keepFloat: [] };
/** The tiny graph's two quantised tensors (test/assets/quantise-static.test.ts) with ranges of the right kind. */
const STATIC = { keepFloat: [], ranges: { input: [-0.5, 0.5], h2: [0, 4] } };

function fakeProject(entry: (derived: Uint8Array) => Record<string, unknown>, spec: unknown = { quantise: QUANTISE }) {
  const root = mkdtempSync(join(tmpdir(), "pd-derive-"));
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "pixeldrop", version: "0.0.0", type: "module" }));
  const pkg = join(root, "node_modules", "@imgly", "background-removal-data");
  mkdirSync(join(pkg, "dist"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "@imgly/background-removal-data", version: "9.9.9" }));
  const source = tinyIsNetModel().bytes;
  const cut = source.length >> 1; // two chunks, so the join is exercised too
  const chunks = [source.subarray(0, cut), source.subarray(cut)];
  let offset = 0;
  const entries = chunks.map((c) => {
    writeFileSync(join(pkg, "dist", sha(c)), c);
    const e = { hash: sha(c), offsets: [offset, offset + c.length] };
    offset += c.length;
    return e;
  });
  writeFileSync(join(pkg, "dist", "resources.json"), JSON.stringify({ "/models/tiny": { chunks: entries, size: offset, mime: "x" } }));
  const ort = join(root, "node_modules", "onnxruntime-web");
  mkdirSync(join(ort, "dist"), { recursive: true });
  writeFileSync(join(ort, "package.json"), JSON.stringify({ name: "onnxruntime-web", main: "dist/ort.node.min.js" }));
  for (const f of ["ort.node.min.js", ...ORT_RUNTIME_FILES]) writeFileSync(join(ort, "dist", f), f);
  const derived = deriveModel(source, spec);
  mkdirSync(join(root, "models"));
  const model = { file: "tiny-int8.onnx", source: { package: "@imgly/background-removal-data", version: "9.9.9", resource: "/models/tiny" }, ...entry(derived) };
  writeFileSync(join(root, "models", "manifest.json"), JSON.stringify({ version: 1, models: { tiny: model } }));
  return { root, derived, path: join(root, "models", "tiny-int8.onnx"), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

const assemble = (root: string) => spawnSync(process.execPath, [script, "--root", root], { encoding: "utf8" });

test("a derived model is built from the source's chunks and checked by its own sha256", () => {
  const p = fakeProject((d) => ({ sha256: sha(d), bytes: d.length, derive: { quantise: QUANTISE } }));
  try {
    const r = assemble(p.root);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /assembled tiny-int8\.onnx/);
    assert.deepEqual(new Uint8Array(readFileSync(p.path)), p.derived);
    const again = assemble(p.root);
    assert.match(again.stdout, /tiny-int8\.onnx ok/);
  } finally {
    p.cleanup();
  }
});

test("a statically quantised model is derived the same way, its activation ranges taken from the spec", () => {
  const spec = { quantiseStatic: STATIC };
  const p = fakeProject((d) => ({ sha256: sha(d), bytes: d.length, derive: spec }), spec);
  try {
    const r = assemble(p.root);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(new Uint8Array(readFileSync(p.path)), p.derived);
    assert.notDeepEqual(p.derived, deriveModel(tinyIsNetModel().bytes, { quantise: QUANTISE }));
    // A tensor without a range is a refusal, not a guess.
    assert.throws(() => deriveModel(tinyIsNetModel().bytes, { quantiseStatic: { keepFloat: [], ranges: { input: [-0.5, 0.5] } } }), /no calibrated range for tensor h2/);
    for (const ranges of [{}, { input: [1, 0] }, { input: [0, "x"] }]) assert.throws(() => checkDeriveSpec({ quantiseStatic: { keepFloat: [], ranges } }), /derive must be/);
  } finally {
    p.cleanup();
  }
});

test("a derived model whose bytes do not hash to the manifest's sha256 is refused and not left behind", () => {
  const p = fakeProject((d) => ({ sha256: "0".repeat(64), bytes: d.length, derive: { quantise: QUANTISE } }));
  try {
    const r = assemble(p.root);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /sha256 [0-9a-f]{64} does not match manifest 0{64}/);
    assert.equal(existsSync(p.path), false);
    assert.deepEqual(readdirSync(join(p.root, "models")).filter((f) => f.includes(".tmp-")), []);
  } finally {
    p.cleanup();
  }
});

test("a malformed derive spec is refused with what it must be", () => {
  const p = fakeProject((d) => ({ sha256: sha(d), bytes: d.length, derive: { quantise: { scales: "per-channel", symmetric: "yes" } } }));
  try {
    const r = assemble(p.root);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /cannot derive it from \/models\/tiny: derive must be/);
    assert.equal(existsSync(p.path), false);
  } finally {
    p.cleanup();
  }
});

test("the repository's derived models have valid derive specs and a different file from their source", () => {
  const manifest = JSON.parse(readFileSync(new URL("../../models/manifest.json", import.meta.url), "utf8")) as {
    models: Record<string, { file: string; sha256: string; derive?: unknown; source?: { resource: string } }>;
  };
  const derived = Object.entries(manifest.models).filter(([, e]) => e.derive !== undefined);
  assert.ok(derived.length > 0, "the manifest has a derived model");
  for (const [name, e] of derived) {
    checkDeriveSpec(e.derive);
    // Every file is one of its own: no two entries (derived from the same resource or not) share bytes.
    const same = Object.entries(manifest.models).filter(([other, o]) => other !== name && o.sha256 === e.sha256);
    assert.deepEqual(same.map(([other]) => other), [], `${name}: its sha256 is another entry's`);
  }
});
