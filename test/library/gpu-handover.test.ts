// auto on a GPU host: WebAssembly serves while the GPU's engine starts, the GPU takes the
// jobs once it is ready, and the CPU's model serves again if the GPU does not start or stops
// (src/engine/library/gpu-handover.ts). Node has no WebGPU, so the engines here are
// stand-ins whose start and runs go as each test needs; test/deno/webgpu_test.ts runs the
// real engines on Mesa's adapter.
import { test } from "node:test";
import assert from "node:assert/strict";
import { handingOverToGpu, QUIET_BEFORE_GPU_MS } from "../../src/engine/library/gpu-handover.ts";
import type { Engine, EngineState } from "../../src/engine/pipeline/engine.ts";
import type { PipelineJob, PipelineResult } from "../../src/engine/pipeline/pipeline.ts";

interface StandIn extends Engine {
  disposed: boolean;
  /** The jobs it ran, by their label. */
  ran: string[];
  /** Ends the oldest unfinished run. */
  finish(): void;
  stop(why: string): void;
}

const deferred = () => {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => {});
  return { promise, resolve, reject };
};

/** An engine of `poolSize` whose start is `start` and whose runs end when finish() is called (or at once with `instant`). */
function standIn(name: string, start: Promise<void>, opts: { poolSize?: number; instant?: boolean; state?: Partial<EngineState> } = {}): StandIn {
  let ready = false;
  let failed: string | undefined;
  start.then(
    () => (ready = true),
    (e: Error) => (failed = e.message),
  );
  const open: (() => void)[] = [];
  const e: StandIn = {
    disposed: false,
    ran: [],
    whenReady: () => start,
    state: () => ({ ready, failed, poolSize: opts.poolSize ?? 1, busy: open.length, queued: 0, model: name, backend: name === "gpu" ? "webgpu" : "wasm", ...opts.state }),
    run(job) {
      e.ran.push((job as unknown as { label: string }).label);
      const result = { ok: true, png: new Uint8Array(), by: name } as unknown as PipelineResult;
      if (opts.instant) return Promise.resolve(result);
      return new Promise((resolve) => open.push(() => resolve(result)));
    },
    finish: () => open.shift()?.(),
    stop: (why) => (failed = why),
    async dispose() {
      e.disposed = true;
    },
  };
  return e;
}

const job = (label: string) => ({ label }) as unknown as PipelineJob;
const tick = () => new Promise((r) => setTimeout(r, 0));
const by = (r: PipelineResult) => (r as unknown as { by: string }).by;

test("WebAssembly serves while the GPU starts, which waits for its first cut-out; the GPU takes new jobs once ready; the CPU's engine goes when its last job ends", async () => {
  const gpuStart = deferred();
  const cpu = standIn("cpu", Promise.resolve());
  const gpu = standIn("gpu", gpuStart.promise, { instant: true, state: { gpuForm: true } });
  let started = 0;
  const engine = handingOverToGpu({ cpu, startGpu: async () => (started++, gpu), reopenCpu: async () => assert.fail("not reopened") });
  await engine.whenReady();
  assert.equal(engine.state().ready, true, "ready as soon as WebAssembly is");
  assert.equal(engine.state().gpuPhase, "starting");
  assert.equal(engine.state().backend, "wasm");
  const first = engine.run(job("a"));
  await tick();
  assert.deepEqual(cpu.ran, ["a"], "the first cut-out comes from WebAssembly");
  await new Promise((r) => setTimeout(r, QUIET_BEFORE_GPU_MS + 50));
  assert.equal(started, 0, "the GPU's start waits while WebAssembly's first cut-out runs");
  cpu.finish();
  assert.equal(by(await first), "cpu");
  await tick();
  assert.equal(started, 1, "then it begins");
  const second = engine.run(job("b"));
  await tick();
  assert.deepEqual(cpu.ran, ["a", "b"], "WebAssembly serves while the GPU starts");
  gpuStart.resolve();
  await engine.settled();
  assert.equal(engine.state().gpuPhase, "running");
  assert.equal(engine.state().backend, "webgpu");
  assert.equal(engine.state().model, "gpu");
  assert.equal(engine.state().gpuForm, true);
  assert.equal(by(await engine.run(job("c"))), "gpu");
  assert.equal(cpu.disposed, false, "the CPU's engine stays while its job runs");
  cpu.finish();
  assert.equal(by(await second), "cpu", "a job stays where it started");
  await tick();
  assert.ok(cpu.disposed, "the CPU's engine goes once its last job is done");
  await engine.dispose();
  assert.ok(gpu.disposed);
});

test("with no job, the GPU's start begins after a quiet moment", async () => {
  const cpu = standIn("cpu", Promise.resolve(), { instant: true });
  let startedAt = 0;
  const t0 = Date.now();
  const engine = handingOverToGpu({ cpu, startGpu: async () => ((startedAt = Date.now()), standIn("gpu", Promise.resolve(), { instant: true })), reopenCpu: async () => cpu });
  await engine.settled();
  assert.ok(startedAt - t0 >= QUIET_BEFORE_GPU_MS - 5, `started after ${startedAt - t0} ms`);
  assert.equal(engine.state().gpuPhase, "running");
  await engine.dispose();
});

test("jobs waiting for the CPU's workers when the GPU is ready go to the GPU", async () => {
  const gpuStart = deferred();
  const cpu = standIn("cpu", Promise.resolve(), { poolSize: 1 });
  const gpu = standIn("gpu", gpuStart.promise, { instant: true });
  const engine = handingOverToGpu({ cpu, startGpu: async () => gpu, reopenCpu: async () => cpu });
  await engine.whenReady();
  const runs = ["a", "b", "c"].map((l) => engine.run(job(l)));
  await tick();
  assert.deepEqual(cpu.ran, ["a"], "one job a CPU worker; the others wait in the handover, not in the CPU's queue");
  assert.equal(engine.state().queued, 2);
  cpu.finish(); // the first cut-out: the GPU starts, and b takes the free CPU worker
  assert.equal(by(await runs[0]!), "cpu");
  await tick();
  assert.deepEqual(cpu.ran, ["a", "b"]);
  gpuStart.resolve();
  await engine.settled();
  assert.equal(by(await runs[2]!), "gpu", "c waited, and went to the GPU");
  assert.deepEqual(gpu.ran, ["c"]);
  cpu.finish();
  assert.equal(by(await runs[1]!), "cpu");
  await engine.dispose();
});

test("a GPU start that never ends costs nothing: every job runs on WebAssembly", async () => {
  const cpu = standIn("cpu", Promise.resolve(), { instant: true });
  const gpu = standIn("gpu", new Promise(() => {}));
  const engine = handingOverToGpu({ cpu, startGpu: async () => gpu, reopenCpu: async () => cpu });
  await engine.whenReady();
  for (const l of ["a", "b", "c"]) assert.equal(by(await engine.run(job(l))), "cpu");
  assert.equal(engine.state().gpuPhase, "starting");
  assert.deepEqual(gpu.ran, []);
  await engine.dispose();
  assert.ok(cpu.disposed && gpu.disposed);
});

test("a GPU that fails to start gives way: the CPU's model runs every job, ready throughout, and the state says why", async () => {
  const gpuStart = deferred();
  const cpu = standIn("cpu", Promise.resolve(), { instant: true });
  const gpu = standIn("gpu", gpuStart.promise);
  const engine = handingOverToGpu({ cpu, startGpu: async () => gpu, reopenCpu: async () => assert.fail("the CPU's engine was never let go") });
  await engine.whenReady();
  gpuStart.reject(new Error("cannot start a webgpu session: no adapter"));
  await engine.settled();
  const st = engine.state();
  assert.equal(st.ready, true);
  assert.equal(st.failed, undefined, "not reported as failed for the GPU's sake");
  assert.equal(st.gpuPhase, "gave-way");
  assert.match(st.gpuFallback ?? "", /no adapter/);
  assert.equal(st.backend, "wasm");
  assert.ok(gpu.disposed);
  assert.equal(by(await engine.run(job("a"))), "cpu");
  await engine.dispose();
});

test("an engine whose GPU opening throws (no device) stays on WebAssembly", async () => {
  const cpu = standIn("cpu", Promise.resolve(), { instant: true });
  const engine = handingOverToGpu({ cpu, startGpu: async () => Promise.reject(new Error("no WebGPU device")), reopenCpu: async () => cpu });
  await engine.settled();
  assert.match(engine.state().gpuFallback ?? "", /no WebGPU device/);
  assert.equal(by(await engine.run(job("a"))), "cpu");
  await engine.dispose();
});

test("a GPU that stops after taking over hands back to the CPU's model, opened again", async () => {
  const cpu = standIn("cpu", Promise.resolve(), { instant: true });
  const gpu = standIn("gpu", Promise.resolve(), { instant: true });
  const again = standIn("cpu-again", Promise.resolve(), { instant: true });
  let reopened = 0;
  const engine = handingOverToGpu({ cpu, startGpu: async () => gpu, reopenCpu: async () => (reopened++, again) });
  await engine.settled();
  await tick();
  assert.ok(cpu.disposed, "let go once the GPU ran");
  assert.equal(by(await engine.run(job("a"))), "gpu");
  gpu.stop("inference worker stopped: device lost");
  const r = await engine.run(job("b"));
  assert.equal(by(r), "cpu-again");
  assert.equal(reopened, 1);
  assert.ok(gpu.disposed);
  const st = engine.state();
  assert.equal(st.gpuPhase, "gave-way");
  assert.match(st.gpuFallback ?? "", /device lost/);
  assert.equal(st.model, "cpu-again");
  await engine.dispose();
  assert.ok(again.disposed);
});

test("the CPU's engine failing to start leaves the GPU's to serve; both failing rejects with the CPU's error", async () => {
  const gpu = standIn("gpu", Promise.resolve(), { instant: true });
  const a = handingOverToGpu({ cpu: standIn("cpu", Promise.reject(new Error("model file missing"))), startGpu: async () => gpu, reopenCpu: async () => assert.fail() });
  await a.whenReady();
  assert.equal(by(await a.run(job("x"))), "gpu");
  await a.dispose();
  const b = handingOverToGpu({
    cpu: standIn("cpu", Promise.reject(new Error("model file missing"))),
    startGpu: async () => standIn("gpu", Promise.reject(new Error("gpu lost"))),
    reopenCpu: async () => assert.fail(),
  });
  await assert.rejects(b.whenReady(), /model file missing/);
  await b.dispose();
});

test("a waiting job can be withdrawn, and dispose rejects those still waiting", async () => {
  const cpu = standIn("cpu", Promise.resolve(), { poolSize: 1 });
  const engine = handingOverToGpu({ cpu, startGpu: async () => standIn("gpu", new Promise(() => {})), reopenCpu: async () => cpu });
  await engine.whenReady();
  const running = engine.run(job("a"));
  const ac = new AbortController();
  const withdrawn = engine.run(job("b"), ac.signal);
  const left = engine.run(job("c"));
  ac.abort(new Error("client left"));
  await assert.rejects(withdrawn, /client left/);
  assert.equal(engine.state().queued, 1);
  const closing = engine.dispose();
  await assert.rejects(left, (e: Error & { code?: string }) => e.code === "shutting_down");
  cpu.finish();
  await running;
  await closing;
  assert.deepEqual(cpu.ran, ["a"]);
});

test("a host with no GPU for it (startGpu finds none): settled, WebAssembly serves, and the state names no GPU phase", async () => {
  const cpu = standIn("cpu", Promise.resolve(), { instant: true });
  const engine = handingOverToGpu({ cpu, startGpu: async () => undefined, reopenCpu: async () => cpu });
  await engine.settled();
  const st = engine.state();
  assert.equal(st.gpuPhase, undefined);
  assert.equal(st.gpuFallback, undefined);
  assert.equal(st.ready, true);
  assert.equal(by(await engine.run(job("a"))), "cpu");
  await engine.dispose();
  assert.ok(cpu.disposed);
});
