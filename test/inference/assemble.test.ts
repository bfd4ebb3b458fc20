// scripts/assemble-models.mjs on a throwaway project: a fake data package with three
// chunks, fake runtime files, and a manifest whose hash we compute here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../scripts/assemble-models.mjs", import.meta.url));
const RUNTIME = [
  "ort-wasm-simd-threaded.mjs",
  "ort-wasm-simd-threaded.wasm",
  "ort-wasm-simd-threaded.asyncify.mjs",
  "ort-wasm-simd-threaded.asyncify.wasm",
];
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/**
 * A throwaway package with a fake data package (three chunks), fake runtime files and a
 * manifest. `hoisted`: the package sits in a consumer's node_modules/ and its dependencies
 * were hoisted beside it, as npm installs a tarball.
 */
function fakeProject(opts: { manifestSha?: string; hoisted?: boolean } = {}) {
  const top = mkdtempSync(join(tmpdir(), "pd-assemble-"));
  const root = opts.hoisted ? join(top, "node_modules", "pixeldrop") : top;
  const deps = join(top, "node_modules");
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "pixeldrop", version: "0.0.0", type: "module" }));
  const pkg = join(deps, "@imgly", "background-removal-data");
  mkdirSync(join(pkg, "dist"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "@imgly/background-removal-data", version: "9.9.9" }));
  const chunks = [randomBytes(1000), randomBytes(1000), randomBytes(517)];
  let offset = 0;
  const entries = chunks.map((c) => {
    const hash = sha(c);
    writeFileSync(join(pkg, "dist", hash), c);
    const e = { hash, offsets: [offset, offset + c.length] };
    offset += c.length;
    return e;
  });
  writeFileSync(join(pkg, "dist", "resources.json"), JSON.stringify({ "/models/tiny": { chunks: entries, size: offset, mime: "x" } }));
  const whole = Buffer.concat(chunks);

  const ort = join(deps, "onnxruntime-web", "dist");
  mkdirSync(ort, { recursive: true });
  writeFileSync(join(deps, "onnxruntime-web", "package.json"), JSON.stringify({ name: "onnxruntime-web", main: "dist/ort.node.min.js" }));
  writeFileSync(join(ort, "ort.node.min.js"), "");
  for (const f of RUNTIME) writeFileSync(join(ort, f), `runtime ${f} ${randomBytes(4).toString("hex")}`);

  mkdirSync(join(root, "models"));
  const manifest = {
    version: 1,
    models: {
      tiny: {
        file: "tiny.onnx",
        sha256: opts.manifestSha ?? sha(whole),
        bytes: whole.length,
        source: { package: "@imgly/background-removal-data", version: "9.9.9", resource: "/models/tiny" },
      },
    },
  };
  writeFileSync(join(root, "models", "manifest.json"), JSON.stringify(manifest));
  return {
    root,
    whole,
    chunkPath: join(pkg, "dist", entries[1]!.hash),
    ortDir: ort,
    model: join(root, "models", "tiny.onnx"),
    cleanup: () => rmSync(top, { recursive: true, force: true }),
  };
}

function run(root: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [script, "--root", root, ...args], { encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const leftovers = (dir: string) => readdirSync(dir).filter((f) => f.includes(".tmp-"));

test("assembles the model from verified chunks and copies the runtime files", () => {
  const p = fakeProject();
  try {
    const r = run(p.root);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /assembled tiny\.onnx/);
    assert.deepEqual(readFileSync(p.model), p.whole);
    for (const f of RUNTIME) assert.deepEqual(readFileSync(join(p.root, "wasm", f)), readFileSync(join(p.ortDir, f)));
  } finally {
    p.cleanup();
  }
});

test("finds the packages hoisted above the package, as npm installs a tarball", () => {
  const p = fakeProject({ hoisted: true });
  try {
    const r = run(p.root);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readFileSync(p.model), p.whole);
    for (const f of RUNTIME) assert.deepEqual(readFileSync(join(p.root, "wasm", f)), readFileSync(join(p.ortDir, f)));
  } finally {
    p.cleanup();
  }
});

test("a second run changes nothing and --quiet prints nothing", () => {
  const p = fakeProject();
  try {
    assert.equal(run(p.root).status, 0);
    const before = statSync(p.model).mtimeMs;
    const wasmBefore = statSync(join(p.root, "wasm", RUNTIME[1]!)).mtimeMs;
    const quiet = run(p.root, "--quiet");
    assert.equal(quiet.status, 0, quiet.stderr);
    assert.equal(quiet.stdout, "");
    const loud = run(p.root);
    assert.match(loud.stdout, /tiny\.onnx ok/);
    assert.equal(statSync(p.model).mtimeMs, before);
    assert.equal(statSync(join(p.root, "wasm", RUNTIME[1]!)).mtimeMs, wasmBefore);
  } finally {
    p.cleanup();
  }
});

test("a damaged model file or an upgraded runtime is rebuilt", () => {
  const p = fakeProject();
  try {
    assert.equal(run(p.root).status, 0);
    const damaged = Buffer.from(p.whole);
    damaged[100] = damaged[100]! ^ 0xff;
    writeFileSync(p.model, damaged);
    writeFileSync(join(p.ortDir, RUNTIME[0]!), "a newer runtime");
    const r = run(p.root, "--quiet");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /assembled tiny\.onnx/);
    assert.match(r.stdout, /copied ort-wasm-simd-threaded\.mjs/);
    assert.deepEqual(readFileSync(p.model), p.whole);
    assert.equal(readFileSync(join(p.root, "wasm", RUNTIME[0]!), "utf8"), "a newer runtime");
  } finally {
    p.cleanup();
  }
});

test("a corrupt chunk stops the build with a non-zero exit and leaves no model", () => {
  const p = fakeProject();
  try {
    const chunk = readFileSync(p.chunkPath);
    chunk[0] = chunk[0]! ^ 1;
    writeFileSync(p.chunkPath, chunk);
    const r = run(p.root, "--quiet");
    assert.equal(r.status, 1);
    assert.match(r.stderr, /chunk [0-9a-f]{64} is corrupt/);
    assert.equal(existsSync(p.model), false);
    assert.deepEqual(leftovers(join(p.root, "models")), []);
  } finally {
    p.cleanup();
  }
});

test("a whole-file hash that differs from the manifest is an error, not a model", () => {
  const p = fakeProject({ manifestSha: "0".repeat(64) });
  try {
    const r = run(p.root);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /does not match manifest/);
    assert.equal(existsSync(p.model), false);
    assert.deepEqual(leftovers(join(p.root, "models")), []);
  } finally {
    p.cleanup();
  }
});

test("a missing runtime file is an error", () => {
  const p = fakeProject();
  try {
    rmSync(join(p.ortDir, RUNTIME[3]!));
    const r = run(p.root, "--quiet");
    assert.equal(r.status, 1);
    assert.match(r.stderr, /runtime file missing/);
  } finally {
    p.cleanup();
  }
});
