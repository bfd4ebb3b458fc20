// What the service says about its GPU: /readyz carries the engine state's `gpu` summary
// (without it affecting readiness: a GPU host whose GPU is unusable still serves on
// WebAssembly), and the start-up line is a warning when a GPU goes unused
// (src/wiring/gpu-at-start.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Engine, EngineState } from "../../src/engine/pipeline/engine.ts";
import type { GpuDiagnosisSummary } from "../../src/engine/inference/gpu-doctor.ts";
import { logGpuAtStart } from "../../src/wiring/gpu-at-start.ts";
import { makeHarness } from "../support/harness.ts";

const UNUSABLE: GpuDiagnosisSummary = {
  verdict: "gpu-unusable",
  summary: "GPU present (/dev/nvidia0) but Deno offers no WebGPU adapter: the engine runs on WebAssembly (1 problem)",
  gpuPresent: true,
  problems: ["libglvnd's libGLdispatch.so.0, which NVIDIA's Vulkan driver (libGLX_nvidia.so.0) needs, is missing: install libglvnd."],
};

function engineWith(state: Partial<EngineState>): Engine {
  return {
    whenReady: async () => {},
    state: () => ({ ready: true, backend: "wasm", poolSize: 1, busy: 0, queued: 0, ...state }),
    run: async () => {
      throw new Error("not used");
    },
    dispose: async () => {},
  };
}

test("/readyz names what the GPU check found, and a GPU that goes unused does not make the service unready", async () => {
  const h = await makeHarness({ embedded: true, engine: engineWith({ gpu: UNUSABLE }) });
  try {
    const res = await h.app.request("/readyz");
    assert.equal(res.status, 200);
    const body = (await res.json()) as { checks: { models: { backend: string; gpu?: GpuDiagnosisSummary } } };
    assert.equal(body.checks.models.backend, "wasm");
    assert.deepEqual(body.checks.models.gpu, UNUSABLE);
  } finally {
    await h.close();
  }
  const plain = await makeHarness({ embedded: true, engine: engineWith({}) });
  try {
    const body = (await (await plain.app.request("/readyz")).json()) as { checks: { models: Record<string, unknown> } };
    assert.ok(!("gpu" in body.checks.models), "no gpu key where the engine reports none");
  } finally {
    await plain.close();
  }
});

test("the start-up line: the engine's own finding as a warning with every problem; else the check made once, here under Node", async () => {
  const lines: Record<string, unknown>[] = [];
  await logGpuAtStart(engineWith({ gpu: UNUSABLE }), (e) => lines.push(e));
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.level, "warn");
  assert.equal(lines[0]!.msg, `GPU: ${UNUSABLE.summary}. ${UNUSABLE.problems[0]}`);
  assert.deepEqual(lines[0]!.gpu, UNUSABLE);

  const software: GpuDiagnosisSummary = { verdict: "software-only", summary: "only a software WebGPU adapter (llvmpipe)", adapter: "llvmpipe", software: true, gpuPresent: false, problems: [] };
  await logGpuAtStart(engineWith({ gpu: software }), (e) => lines.push(e));
  assert.deepEqual(lines[1], { level: "info", msg: "GPU: only a software WebGPU adapter (llvmpipe)", gpu: software });

  // An engine that does not report: this process's own diagnosis (Node: WebGPU needs Deno).
  await logGpuAtStart(engineWith({}), (e) => lines.push(e));
  const own = lines[2]!;
  assert.match(String(own.msg), /^GPU: WebGPU needs Deno \(this is node\)/);
  assert.equal((own.gpu as GpuDiagnosisSummary).verdict, "needs-deno");
});
