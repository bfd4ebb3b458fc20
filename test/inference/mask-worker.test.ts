// The pool end to end with the mask worker: stub backend (fast), and a model on
// WebAssembly inside a worker thread (ORT-web then starts its own threads in there). The
// model is the tiny one of IS-Net's shape (test/support/tiny-onnx.ts), whose worker mask
// must equal the same session's mask run in this thread; the real model runs in pool
// workers through the library (test/library/remover.test.ts, test/deno/library_test.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createWorkerPool } from "../../src/engine/inference/pool.ts";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import { createMaskSession, type MaskSessionOptions } from "../../src/engine/inference/session.ts";
import { writeTinyModel } from "../support/tiny-onnx.ts";
import type { MaskJob, MaskResult, MaskWorkerInfo } from "../../src/engine/inference/mask-worker.ts";
import { DEFAULT_MODEL, DEFAULT_MODEL_FILE } from "../support/default-model.ts";

const maskWorker = new URL("../../src/engine/inference/mask-worker.ts", import.meta.url);
const modelsDir = fileURLToPath(new URL("../../models/", import.meta.url));
const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));
const haveModel = existsSync(`${modelsDir}${DEFAULT_MODEL_FILE}`) && existsSync(`${wasmDir}ort-wasm-simd-threaded.wasm`);

async function options(backend: MaskSessionOptions["backend"]): Promise<MaskSessionOptions> {
  const m = await resolveModel({ model: DEFAULT_MODEL, modelsDir });
  if (!m.ok) throw new Error(m.title);
  return { model: m.entry, modelPath: m.path, backend, threads: 2, wasmDir, stubDelayMs: 5 };
}

test("mask pool on the stub backend: two warm workers, masks come back", { skip: !haveModel }, async () => {
  const pool = createWorkerPool<MaskJob, MaskResult>({ size: 2, workerUrl: maskWorker, workerData: await options("stub") });
  try {
    const info = await pool.ready();
    assert.equal(info.backend, "stub");
    assert.deepEqual((info.workers[0] as MaskWorkerInfo).inputSize, { width: 1024, height: 1024 });
    const rgb = new Uint8Array(1024 * 1024 * 3);
    const outs = await Promise.all([0, 1, 2].map(() => pool.run({ rgb: rgb.slice() })));
    for (const { mask } of outs) {
      assert.equal(mask.length, 1024 * 1024);
      assert.equal(mask[512 * 1024 + 512], 255);
      assert.equal(mask[0], 0);
    }
    await assert.rejects(pool.run({ rgb: new Uint8Array(3) }), (err: unknown) => (err as { code?: string }).code === "inference_failed");
  } finally {
    await pool.dispose();
  }
});

test("mask pool on wasm: the worker's mask is the one the same model gives in this thread", { skip: !haveModel }, async () => {
  const tiny = writeTinyModel(256, 256);
  const resolved = await resolveModel({ model: tiny.path, modelsDir });
  if (!resolved.ok) throw new Error(resolved.title);
  const session: MaskSessionOptions = { model: resolved.entry, modelPath: resolved.path, backend: "wasm", threads: 2, wasmDir };
  const pool = createWorkerPool<MaskJob, MaskResult>({ size: 1, workerUrl: maskWorker, workerData: session });
  const inline = await createMaskSession(session);
  try {
    const info = await pool.ready();
    assert.equal(info.backend, "wasm");
    assert.deepEqual((info.workers[0] as MaskWorkerInfo).inputSize, { width: 256, height: 256 });
    // A red disc on a blue-grey background, with a ramp so the mask has many levels.
    const rgb = new Uint8Array(256 * 256 * 3);
    for (let y = 0; y < 256; y++) {
      for (let x = 0; x < 256; x++) {
        const inside = Math.hypot(x - 128, y - 128) < 60;
        rgb.set(inside ? [220, 40, x] : [90, 140, y], (y * 256 + x) * 3);
      }
    }
    const expected = await inline.run(rgb.slice());
    // An idle pool worker drops the input tensor it keeps between runs; the next run makes it again.
    assert.ok(inline.releaseIdle, "a WebAssembly session can drop its kept input tensor");
    inline.releaseIdle();
    assert.deepEqual(await inline.run(rgb.slice()), expected, "the same mask after the release");
    const { mask } = await pool.run({ rgb }, [rgb.buffer]);
    assert.equal(rgb.byteLength, 0, "the pixels were transferred, not copied");
    assert.equal(mask.length, 256 * 256);
    assert.ok(new Set(expected).size > 20, "a mask with many levels");
    assert.deepEqual(mask, expected);
  } finally {
    await pool.dispose();
    await inline.dispose();
    tiny.remove();
  }
});
