// The image keeps one onnxruntime-web build (the plain SIMD + threads one Node loads), so the
// engine's asset check must ask only for the builds its backend can load: a start with
// backend wasm or auto on Node succeeds where the WebGPU (asyncify) files are absent, and
// still fails when the build it needs is missing. The package pruned as the Dockerfile
// prunes it is checked here with the real files, down to running a model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assembleAssets, ORT_RUNTIME_BUILDS } from "../../src/engine/assets/assemble.ts";
import { runtimesFor } from "../../src/engine/assets/locate.ts";
import { tinyIsNetModel } from "../support/tiny-onnx.ts";
import { readDockerfile, REPO } from "./support/deploy-files.ts";

const REPO_ORT = join(REPO, "node_modules", "onnxruntime-web");

test("each backend asks for the builds it loads; auto on Node (no navigator.gpu) only the plain one", () => {
  assert.equal((globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu, undefined);
  assert.deepEqual(runtimesFor("wasm"), ["wasm"]);
  assert.deepEqual(runtimesFor("auto"), ["wasm"]);
  assert.deepEqual(runtimesFor("webgpu"), ["webgpu"]);
  assert.deepEqual(runtimesFor("native"), []);
  assert.deepEqual(runtimesFor(undefined), ["wasm", "webgpu"]);
});

/** The onnxruntime-web files the Dockerfile's deps stage keeps (its `find ... ! -name` list). */
function keptByDockerfile(): string[] {
  const prune = readDockerfile().stages.flat().find((i) => i.op === "RUN" && i.args.includes("cd node_modules/onnxruntime-web"))!.args;
  return [...prune.matchAll(/! -name '([^']+)'/g)].map((m) => m[1]!);
}

/**
 * A project whose onnxruntime-web holds only what the image keeps: the real package.json
 * and the real files the Dockerfile's prune step leaves, beside the real onnxruntime-common.
 */
function prunedProject() {
  const root = mkdtempSync(join(tmpdir(), "pd-runtimes-"));
  const ort = join(root, "node_modules", "onnxruntime-web");
  mkdirSync(join(ort, "dist"), { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "app", version: "0.0.0", type: "module" }));
  copyFileSync(join(REPO_ORT, "package.json"), join(ort, "package.json"));
  for (const f of keptByDockerfile()) copyFileSync(join(REPO_ORT, "dist", f), join(ort, "dist", f));
  symlinkSync(join(REPO, "node_modules", "onnxruntime-common"), join(root, "node_modules", "onnxruntime-common"));
  return { root, wasmDir: join(root, "wasm"), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test("the Dockerfile keeps the plain build and Node's entries of onnxruntime-web, nothing else", () => {
  assert.deepEqual(keptByDockerfile().sort(), ["ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm", "ort.node.min.js", "ort.node.min.mjs"]);
});

test("with onnxruntime-web pruned as in the image, the wasm runtime is made whole and WebGPU's is not asked for", async () => {
  const p = prunedProject();
  try {
    const opts = { anchor: p.root, manifest: { models: {} }, modelsDir: join(p.root, "models"), wasmDir: p.wasmDir };
    assert.equal(await assembleAssets({ ...opts, runtimes: runtimesFor("auto") }), 2);
    assert.deepEqual(readdirSync(p.wasmDir).sort(), [...ORT_RUNTIME_BUILDS.wasm].sort());
    assert.equal(await assembleAssets({ ...opts, runtimes: runtimesFor("wasm") }), 0, "a second start copies nothing");
    // Native loads no WebAssembly, so it needs no runtime package at all.
    assert.equal(await assembleAssets({ ...opts, anchor: tmpdir(), runtimes: runtimesFor("native") }), 0);
    // The build a backend needs must be there: webgpu (or every build) fails by name.
    await assert.rejects(assembleAssets({ ...opts, runtimes: runtimesFor("webgpu") }), /ort-wasm-simd-threaded\.asyncify\.mjs/);
    await assert.rejects(assembleAssets(opts), /runtime file missing/);
    assert.equal(existsSync(join(p.wasmDir, ORT_RUNTIME_BUILDS.webgpu[0])), false);
  } finally {
    p.cleanup();
  }
});

test("the pruned onnxruntime-web still runs a model on Node (a tiny graph, WebAssembly)", async () => {
  const p = prunedProject();
  try {
    await assembleAssets({ anchor: p.root, manifest: { models: {} }, modelsDir: join(p.root, "models"), wasmDir: p.wasmDir, runtimes: ["wasm"] });
    const model = tinyIsNetModel(16, 16);
    writeFileSync(join(p.root, "tiny.onnx"), model.bytes);
    // Imported by name from the pruned project, as the image's service imports it.
    const script = `
      import { readFileSync } from "node:fs";
      import { pathToFileURL } from "node:url";
      const ort = await import("onnxruntime-web");
      ort.env.wasm.wasmPaths = pathToFileURL(process.argv[1] + "/").href;
      ort.env.wasm.numThreads = 1;
      const session = await ort.InferenceSession.create(readFileSync("tiny.onnx"), { executionProviders: ["wasm"] });
      const out = await session.run({ input: new ort.Tensor("float32", new Float32Array(3 * 16 * 16).fill(0.25), [1, 3, 16, 16]) });
      console.log(JSON.stringify({ dims: out.output.dims, first: out.output.data[0] }));
      await session.release();`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, p.wasmDir], { cwd: p.root, encoding: "utf8", timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout.trim().split("\n").pop()!) as { dims: number[]; first: number };
    assert.deepEqual(got.dims, [1, 1, 16, 16]);
    assert.ok(got.first > 0 && got.first < 1, `a sigmoid output, got ${got.first}`);
  } finally {
    p.cleanup();
  }
});
