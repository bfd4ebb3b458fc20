// auto's GPU form that does not start on the GPU gives way to the model asked for on the
// CPU (src/engine/library/gpu-fallback.ts). Node has no WebGPU, so the engines here are
// stand-ins whose start succeeds or fails as each test needs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startingOrFallingBack } from "../../src/engine/library/gpu-fallback.ts";
import type { Engine, EngineState } from "../../src/engine/pipeline/engine.ts";
import type { PipelineResult } from "../../src/engine/pipeline/pipeline.ts";

interface StandIn extends Engine {
  disposed: boolean;
  ran: number;
}

function standIn(state: Partial<EngineState>, start: Promise<void>): StandIn {
  let ready = false;
  start.then(() => (ready = true), () => {});
  const e: StandIn = {
    disposed: false,
    ran: 0,
    whenReady: () => start,
    state: () => ({ ready, poolSize: 1, busy: 0, queued: 0, ...state }),
    async run() {
      e.ran++;
      return { ok: false, code: "inference_failed", title: state.model ?? "" } as unknown as PipelineResult;
    },
    async dispose() {
      e.disposed = true;
    },
  };
  return e;
}

const job = {} as Parameters<Engine["run"]>[0];

test("a GPU form that starts stays: its state, its runs, and the CPU's model is never opened", async () => {
  const gpu = standIn({ backend: "webgpu", model: "int8-static-gpu", gpuForm: true }, Promise.resolve());
  let opened = 0;
  const engine = startingOrFallingBack(gpu, async () => (opened++, standIn({}, Promise.resolve())));
  await engine.whenReady();
  assert.equal(engine.state().model, "int8-static-gpu");
  assert.equal(engine.state().gpuFallback, undefined);
  await engine.run(job);
  assert.equal(gpu.ran, 1);
  assert.equal(opened, 0);
  await engine.dispose();
  assert.ok(gpu.disposed);
});

test("a GPU form whose start fails gives way to the CPU's model, which then runs every job and says why", async () => {
  let failStart!: (err: Error) => void;
  const gpu = standIn({ backend: "webgpu", model: "int8-static-gpu", gpuForm: true }, new Promise((_, reject) => (failStart = reject)));
  let release!: () => void;
  const cpu = standIn({ backend: "wasm", model: "int8-static" }, new Promise<void>((resolve) => (release = resolve)));
  const engine = startingOrFallingBack(gpu, async () => cpu);
  failStart(new Error("cannot start a webgpu session: no adapter"));
  await new Promise((r) => setTimeout(r, 0));
  // While the CPU's model starts: not ready, and not reported as failed (no /readyz failure for the GPU's sake).
  const meanwhile = engine.state();
  assert.equal(meanwhile.ready, false);
  assert.equal(meanwhile.failed, undefined);
  release();
  await engine.whenReady();
  const st = engine.state();
  assert.equal(st.ready, true);
  assert.equal(st.backend, "wasm");
  assert.equal(st.model, "int8-static");
  assert.equal(st.gpuForm, undefined);
  assert.match(st.gpuFallback ?? "", /no adapter/);
  assert.ok(gpu.disposed, "the GPU engine is disposed");
  await engine.run(job);
  assert.equal(cpu.ran, 1);
  assert.equal(gpu.ran, 0);
  await engine.dispose();
  assert.ok(cpu.disposed);
});

test("when the CPU's model cannot start either, whenReady rejects with its error", async () => {
  const gpu = standIn({ gpuForm: true }, Promise.reject(new Error("gpu lost")));
  const engine = startingOrFallingBack(gpu, async () => standIn({}, Promise.reject(new Error("model file missing"))));
  await assert.rejects(engine.whenReady(), /model file missing/);
  await engine.dispose();
});
