// The service on a GPU host, with engines standing in for WebAssembly's and the GPU's (Node
// has no WebGPU) behind the real handover (src/engine/library/gpu-handover.ts): ready and
// serving on WebAssembly while the GPU starts, then the GPU's; admission retuned to the GPU's
// warm run and worker count; X-PD-Model, /readyz and /metrics following the engine that made
// each cut-out, also when the GPU stops and WebAssembly serves again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { createInlineEngine } from "../../src/engine/pipeline/inline-engine.ts";
import type { Engine, EngineState } from "../../src/engine/pipeline/engine.ts";
import { handingOverToGpu } from "../../src/engine/library/gpu-handover.ts";
import { OPERATOR_TOKEN, fixture, makeHarness } from "../support/harness.ts";
import { DEFAULT_MODEL_LABEL } from "../support/default-model.ts";

const manifest = JSON.parse(readFileSync(new URL("../../models/manifest.json", import.meta.url), "utf8")) as {
  models: Record<string, { file: string; source?: { version: string } }>;
};
const gpuEntry = manifest.models["int8-static-gpu-f16"]!;
const GPU_FORM_LABEL = `${gpuEntry.file.replace(/\.onnx$/, "")}/${gpuEntry.source?.version ?? ""}`;

/** A stub pipeline that names `model` in its state and its results, as open-engine's engines do. */
async function standIn(model: string, extra: Partial<EngineState>, start: Promise<void> = Promise.resolve()) {
  const session = await createMaskSession({ model: { inputSize: [64, 64] } as never, modelPath: "", backend: "stub", threads: 1, wasmDir: "" });
  const inner = createInlineEngine(session);
  let failed: string | undefined;
  let ready = false;
  start.then(() => (ready = true), () => {});
  const e: Engine & { stop(why: string): void } = {
    ...inner,
    whenReady: () => start,
    state: (): EngineState => ({ ...inner.state(), ready, model, failed, ...extra }),
    async run(job, signal) {
      const r = await inner.run(job, signal);
      return r.ok ? { ...r, model } : r;
    },
    stop: (why) => (failed = why),
  };
  return e;
}

test("on a GPU host: WebAssembly serves first, then the GPU; admission, X-PD-Model, /readyz and /metrics follow, and back when the GPU stops", async () => {
  let releaseGpu!: () => void;
  const gpuStarted = new Promise<void>((r) => (releaseGpu = r));
  const gpu = await standIn("int8-static-gpu-f16", { backend: "webgpu", gpuForm: true, warmRunMs: 420, poolSize: 4 }, gpuStarted);
  const engine = handingOverToGpu({
    cpu: await standIn("int8-static", { backend: "wasm" }),
    startGpu: async () => gpu,
    reopenCpu: () => standIn("int8-static", { backend: "wasm" }),
  });
  const h = await makeHarness({ embedded: true, engine });
  const metrics = async () => (await h.app.request("/metrics", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })).text();
  const models = async () => ((await (await h.app.request("/readyz")).json()) as { checks: { models: Record<string, unknown> } }).checks.models;
  try {
    await h.services.engine!.whenReady();
    const { testKey } = await h.customer();
    const call = async () => {
      const res = await h.removebg(testKey, { image_file: fixture("photos/chelsea.png"), size: "preview" });
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
      return res.headers.get("x-pd-model");
    };
    // The GPU still starting: ready, on WebAssembly.
    assert.equal((await models()).ok, true);
    assert.equal((await models()).gpuPhase, "starting");
    assert.equal(await call(), DEFAULT_MODEL_LABEL);
    assert.match(await metrics(), /pixeldrop_engine_info\{backend="wasm",model="int8-static"\} 1/);

    releaseGpu();
    await engine.settled();
    await new Promise((r) => setImmediate(r)); // the service's settled hook runs after
    assert.equal(h.services.admission!.stats().avgJobMs, 420, "admission's estimate is the GPU's warm run");
    assert.equal((await models()).gpuPhase, "running");
    assert.equal(await call(), GPU_FORM_LABEL);
    assert.match(await metrics(), /pixeldrop_engine_info\{backend="webgpu",model="int8-static-gpu-f16"\} 1/);

    gpu.stop("inference worker stopped: device lost");
    assert.equal(await call(), DEFAULT_MODEL_LABEL, "the CPU's model again");
    const after = await models();
    assert.equal(after.gpuPhase, "gave-way");
    assert.match(String(after.gpuFallback), /device lost/);
  } finally {
    await h.close();
  }
});
