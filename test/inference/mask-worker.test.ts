// The pool end to end with the mask worker: stub backend (fast) and the real small model
// on WebAssembly inside a worker thread (ORT-web then starts its own threads in there).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createWorkerPool } from "../../src/engine/inference/pool.ts";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import type { MaskSessionOptions } from "../../src/engine/inference/session.ts";
import type { MaskJob, MaskResult, MaskWorkerInfo } from "../../src/engine/inference/mask-worker.ts";

const maskWorker = new URL("../../src/engine/inference/mask-worker.ts", import.meta.url);
const modelsDir = fileURLToPath(new URL("../../models/", import.meta.url));
const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));
const haveModel = existsSync(`${modelsDir}isnet-small.onnx`) && existsSync(`${wasmDir}ort-wasm-simd-threaded.wasm`);

async function options(backend: MaskSessionOptions["backend"]): Promise<MaskSessionOptions> {
  const m = await resolveModel({ model: "small", modelsDir });
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

test("mask pool on wasm with the real small model", { skip: !haveModel }, async () => {
  const pool = createWorkerPool<MaskJob, MaskResult>({ size: 1, workerUrl: maskWorker, workerData: await options("wasm") });
  try {
    const info = await pool.ready();
    assert.equal(info.backend, "wasm");
    // A red disc on a blue-grey background: a plain salient object.
    const rgb = new Uint8Array(1024 * 1024 * 3);
    for (let y = 0; y < 1024; y++) {
      for (let x = 0; x < 1024; x++) {
        const inside = Math.hypot(x - 512, y - 512) < 250;
        rgb.set(inside ? [220, 40, 40] : [90, 140, 200], (y * 1024 + x) * 3);
      }
    }
    const { mask } = await pool.run({ rgb }, [rgb.buffer]);
    assert.equal(rgb.byteLength, 0);
    assert.equal(mask.length, 1024 * 1024);
    assert.ok(mask[512 * 1024 + 512]! > 200, "disc centre is foreground");
    assert.ok(mask[10 * 1024 + 10]! < 30, "corner is background");
  } finally {
    await pool.dispose();
  }
});
