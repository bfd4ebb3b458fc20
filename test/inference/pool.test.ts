// The worker pool with a model-free worker (workers/echo-worker.ts, a .ts entry, which
// also checks that TypeScript workers load under tsx).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorkerPool, type WorkerPool } from "../../src/engine/inference/pool.ts";
import type { EchoData, EchoJob, EchoOut } from "./workers/echo-worker.ts";

const echoWorker = new URL("./workers/echo-worker.ts", import.meta.url);

function pool(size: number, data: EchoData = {}, extra: { startTimeoutMs?: number } = {}): WorkerPool<EchoJob, EchoOut> {
  return createWorkerPool<EchoJob, EchoOut>({ size, workerUrl: echoWorker, workerData: data, ...extra });
}

const codeOf = (err: unknown) => (err as { code?: string }).code;

test("ready() reports every worker's info; jobs run and stats follow", async () => {
  const p = pool(2);
  try {
    const info = await p.ready();
    assert.equal(info.size, 2);
    assert.equal(info.backend, "echo");
    const threads = info.workers.map((w) => (w as { threadId: number }).threadId);
    assert.equal(new Set(threads).size, 2);
    assert.deepEqual(p.stats(), { size: 2, busy: 0, queued: 0, ready: true, backend: "echo", restarts: 0 });
    const out = await p.run({ op: "echo", value: 7 });
    assert.equal(out.value, 7);
  } finally {
    await p.dispose();
  }
});

test("one worker takes queued jobs in FIFO order, one at a time", async () => {
  const p = pool(1);
  try {
    await p.ready();
    const jobs = [1, 2, 3, 4, 5].map((value) => p.run({ op: "echo", value, delayMs: 20 }));
    assert.deepEqual({ busy: p.stats().busy, queued: p.stats().queued }, { busy: 1, queued: 4 });
    const outs = await Promise.all(jobs);
    assert.deepEqual(outs.map((o) => o.value), [1, 2, 3, 4, 5]);
    assert.deepEqual(outs.map((o) => o.handled), [1, 2, 3, 4, 5]);
  } finally {
    await p.dispose();
  }
});

test("a worker hears idle after an answer when no job waits for it, not between queued jobs", async () => {
  const p = pool(1);
  try {
    await p.ready();
    const queued = await Promise.all([1, 2, 3].map((value) => p.run({ op: "echo", value, delayMs: 20 })));
    assert.deepEqual(queued.map((o) => o.idles), [0, 0, 0], "each answer was followed by the next job");
    const later = await p.run({ op: "echo", value: 4 });
    assert.equal(later.idles, 1, "the answer that emptied the queue was followed by idle");
    await assert.rejects(p.run({ op: "fail", message: "no" }));
    assert.equal((await p.run({ op: "echo", value: 5 })).idles, 3, "an answer with an error counts too");
  } finally {
    await p.dispose();
  }
});

test("jobs spread over free workers", async () => {
  const p = pool(2);
  try {
    await p.ready();
    const [a, b] = await Promise.all([p.run({ op: "echo", value: 1, delayMs: 200 }), p.run({ op: "echo", value: 2, delayMs: 200 })]);
    assert.notEqual(a.threadId, b.threadId);
  } finally {
    await p.dispose();
  }
});

test("a job that throws fails alone; the worker stays", async () => {
  const p = pool(1);
  try {
    const info = await p.ready();
    await assert.rejects(p.run({ op: "fail", message: "bad input" }), (err: unknown) => {
      assert.equal(codeOf(err), "inference_failed");
      assert.match((err as Error).message, /bad input/);
      return true;
    });
    // A code that is not one of ours (a Node ERR_ code, say) is reported as inference_failed.
    await assert.rejects(p.run({ op: "fail", message: "odd", code: "ERR_SOMETHING" }), (err: unknown) => codeOf(err) === "inference_failed");
    await assert.rejects(p.run({ op: "fail", message: "closing", code: "shutting_down" }), (err: unknown) => codeOf(err) === "shutting_down");
    const next = await p.run({ op: "echo", value: 3 });
    assert.equal(next.threadId, (info.workers[0] as { threadId: number }).threadId);
    assert.equal(p.stats().restarts, 0);
  } finally {
    await p.dispose();
  }
});

test("a worker that dies mid-job fails that job with inference_failed and is replaced", async () => {
  const p = pool(1);
  try {
    const info = await p.ready();
    const firstThread = (info.workers[0] as { threadId: number }).threadId;
    const crash = p.run({ op: "crash" });
    const queuedBehind = p.run({ op: "echo", value: 9 });
    await assert.rejects(crash, (err: unknown) => {
      assert.equal(codeOf(err), "inference_failed");
      assert.match((err as Error).message, /died during the job.*crashed on purpose/);
      return true;
    });
    const after = await queuedBehind; // served by the replacement
    assert.equal(after.value, 9);
    assert.notEqual(after.threadId, firstThread);
    assert.equal(after.handled, 1);
    const s = p.stats();
    assert.equal(s.restarts, 1);
    assert.equal(s.size, 1);
    assert.equal(s.ready, true);
  } finally {
    await p.dispose();
  }
});

test("buffers in the transfer list move to the worker", async () => {
  const p = pool(1);
  try {
    await p.ready();
    const data = new Uint8Array([1, 2, 3, 250]);
    const out = await p.run({ op: "bytes", data }, [data.buffer]);
    assert.equal(out.byteSum, 256);
    assert.equal(data.byteLength, 0); // detached: moved, not copied
  } finally {
    await p.dispose();
  }
});

test("a worker whose init fails makes ready() reject with model_unavailable", async () => {
  const p = pool(2, { failInit: true });
  try {
    await assert.rejects(p.ready(), (err: unknown) => codeOf(err) === "model_unavailable" && /init refused on purpose/.test((err as Error).message));
    await assert.rejects(p.run({ op: "echo", value: 1 }), (err: unknown) => codeOf(err) === "model_unavailable");
    assert.equal(p.stats().ready, false);
  } finally {
    await p.dispose();
  }
});

test("a worker that exits during init, or is too slow, fails the start", async () => {
  const crashed = pool(1, { crashInit: true });
  const slow = pool(1, { initDelayMs: 5000 }, { startTimeoutMs: 300 });
  try {
    await assert.rejects(crashed.ready(), /exited with code 3/);
    await assert.rejects(slow.ready(), /did not become ready within 300 ms/);
  } finally {
    await Promise.all([crashed.dispose(), slow.dispose()]);
  }
});

test("dispose lets the running job finish, rejects queued ones and later runs", async () => {
  const p = pool(1);
  await p.ready();
  const running = p.run({ op: "echo", value: 1, delayMs: 200 });
  const queued = p.run({ op: "echo", value: 2 });
  const queuedOutcome = queued.then(
    () => "resolved",
    (err: unknown) => codeOf(err),
  );
  await p.dispose();
  assert.equal((await running).value, 1);
  assert.equal(await queuedOutcome, "shutting_down");
  await assert.rejects(p.run({ op: "echo", value: 3 }), (err: unknown) => codeOf(err) === "shutting_down");
  assert.equal(p.stats().ready, false);
});
