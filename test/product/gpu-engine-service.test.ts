// The service on a GPU host, with an engine standing in for one (Node has no WebGPU): the
// engine's state says it runs auto's GPU form and how long a warm run took at start.
// Admission's first estimate is that time, X-PD-Model names the GPU form while it runs and
// the configured model once the engine runs that instead (src/wiring/services.ts), and
// /metrics labels the backend.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { createInlineEngine } from "../../src/engine/pipeline/inline-engine.ts";
import type { Engine, EngineState } from "../../src/engine/pipeline/engine.ts";
import { OPERATOR_TOKEN, fixture, makeHarness } from "../support/harness.ts";
import { DEFAULT_MODEL_LABEL } from "../support/default-model.ts";
import { readFileSync } from "node:fs";

const manifest = JSON.parse(readFileSync(new URL("../../models/manifest.json", import.meta.url), "utf8")) as {
  models: Record<string, { file: string; source?: { version: string } }>;
};
const gpuEntry = manifest.models["int8-static-gpu"]!;
const GPU_FORM_LABEL = `${gpuEntry.file.replace(/\.onnx$/, "")}/${gpuEntry.source?.version ?? ""}`;

/** A stub pipeline whose state reports what `onGpu()` says (true: auto's GPU form on WebGPU). */
async function gpuStandIn(onGpu: () => boolean): Promise<Engine> {
  const session = await createMaskSession({ model: { inputSize: [64, 64] } as never, modelPath: "", backend: "stub", threads: 1, wasmDir: "" });
  const inner = createInlineEngine(session);
  return {
    ...inner,
    state: (): EngineState =>
      onGpu()
        ? { ...inner.state(), backend: "webgpu", model: "int8-static-gpu", gpuForm: true, warmRunMs: 420 }
        : { ...inner.state(), backend: "wasm", model: "int8-static", gpuFallback: "GPU lost" },
  };
}

test("on a GPU: admission starts from the warm run's time, X-PD-Model follows the model that runs, /metrics labels the backend", async () => {
  let onGpu = true;
  const h = await makeHarness({ embedded: true, engine: await gpuStandIn(() => onGpu) });
  try {
    await h.services.engine!.whenReady();
    await new Promise((r) => setImmediate(r)); // the ready hook runs after whenReady resolves
    assert.equal(h.services.admission!.stats().avgJobMs, 420, "admission's estimate is the GPU's warm run");
    assert.ok(gpuEntry.source?.version, "the GPU form's manifest entry names its source version");
    const { testKey } = await h.customer();
    const call = () => h.removebg(testKey, { image_file: fixture("photos/chelsea.png"), size: "preview" });
    const first = await call();
    assert.equal(first.status, 200, await first.clone().text());
    assert.equal(first.headers.get("x-pd-model"), GPU_FORM_LABEL);
    await first.arrayBuffer();
    const metrics = await (await h.app.request("/metrics", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })).text();
    assert.match(metrics, /pixeldrop_engine_info\{backend="webgpu",model="int8-static-gpu"\} 1/);
    onGpu = false; // the engine now runs the configured model on the CPU
    const second = await call();
    assert.equal(second.status, 200);
    assert.equal(second.headers.get("x-pd-model"), DEFAULT_MODEL_LABEL);
    await second.arrayBuffer();
  } finally {
    await h.close();
  }
});
