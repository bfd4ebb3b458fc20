// Inference runs in worker threads, so the HTTP event loop stays free: while two inferences
// run in a pool of two, health requests are answered within 100 ms each. The model is a
// stand-in of IS-Net's contract at its 1024² input, deep enough that each run is about a
// second of onnxruntime-web convolutions in its worker (test/support/tiny-onnx.ts): where
// the session runs, not which weights it holds, is what this checks, and IS-Net's first
// run in two fresh workers would cost half a minute of CPU.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createEngine } from "../../src/engine/pipeline/engine.ts";
import { PACKAGE_WASM_DIR } from "../../src/engine/assets/paths.ts";
import { fixture } from "../support/harness.ts";
import { writeTinyModel } from "../support/tiny-onnx.ts";

/** Extra layers: about 1.3 s a run on one thread of this 2-core machine's baseline WebAssembly code (0.7 s optimised). */
const LAYERS = 32;
const slow = writeTinyModel(1024, 1024, LAYERS);
after(() => slow.remove());

test("a request is answered within 100 ms while two inferences are running", async () => {
  const engine = createEngine({
    poolSize: 2,
    session: { model: slow.model.entry, modelPath: slow.path, backend: "wasm", threads: 1, wasmDir: PACKAGE_WASM_DIR },
  });
  try {
    await engine.whenReady();
    const app = new Hono();
    app.get("/healthz", (c) => c.json({ status: "ok" }));

    let running = 2;
    const jobs = [0, 1].map(() =>
      engine.run({ image: fixture("photos/chelsea.png"), size: "preview", semitransparency: true }).finally(() => running--),
    );
    // Let both jobs reach their workers.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(engine.state().busy, 2, "both workers should be busy");

    const latencies: number[] = [];
    while (running === 2 && latencies.length < 20) {
      const t0 = performance.now();
      const res = await app.request("/healthz");
      latencies.push(performance.now() - t0);
      assert.equal(res.status, 200);
      await new Promise((r) => setTimeout(r, 50));
    }
    const results = await Promise.all(jobs);
    assert.ok(results.every((r) => r.ok));
    assert.ok(latencies.length >= 3, `expected several answers during inference, got ${latencies.length}`);
    // The median must meet the 100 ms bar; the worst must still be far below one
    // inference (seconds), which is what a blocked event loop would show. CPU-starved
    // CI machines can stretch a single answer, so the worst gets a looser bound.
    const sorted = [...latencies].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    const worst = sorted[sorted.length - 1];
    const seen = `median ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms over ${latencies.length} answers`;
    assert.ok(median < 100, seen);
    assert.ok(worst < 1000, seen);
  } finally {
    await engine.dispose();
  }
});
