// Typed arrays cross our threads as buffers plus positions (src/engine/inference/thread-views.ts):
// Deno's node:worker_threads clones a view element by element (a 12 MP job took minutes).
// The codec's round trip, and the messages the pool and the band threads really post.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { packViews, unpackViews } from "../../src/engine/inference/thread-views.ts";
import { createWorkerPool } from "../../src/engine/inference/pool.ts";
import { startThreadBands } from "../../src/engine/pipeline/pipeline-bands.ts";
import { runPipeline } from "../../src/engine/pipeline/pipeline.ts";
import type { EchoJob, EchoOut } from "./workers/echo-worker.ts";

/** Where in `value` a typed array or DataView sits, if anywhere. */
function viewPath(value: unknown, path = "message"): string | undefined {
  if (ArrayBuffer.isView(value)) return path;
  if (value === null || typeof value !== "object" || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const found = viewPath(v, `${path}.${k}`);
    if (found) return found;
  }
  return undefined;
}

/** Every message posted from this thread to any worker while `run` runs. */
async function postedDuring(run: () => Promise<void>): Promise<unknown[]> {
  const posted: unknown[] = [];
  const original = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, msg: unknown, transfer?: readonly Transferable[]) {
    posted.push(msg);
    return original.call(this, msg, transfer as never);
  };
  try {
    await run();
  } finally {
    Worker.prototype.postMessage = original;
  }
  return posted;
}

test("packViews leaves no view in a message, and unpackViews gives back each view over the same memory", () => {
  const plain = new ArrayBuffer(64);
  const shared = new SharedArrayBuffer(32);
  const message = {
    id: 3,
    image: { width: 2, height: 2, data: new Uint8ClampedArray(plain, 8, 16) },
    planes: [new Float32Array(shared, 4, 3), new Int32Array(shared, 16, 2)],
    bytes: Buffer.from([1, 2, 3]),
    header: new DataView(plain, 40, 8),
    big: new BigInt64Array(1),
    text: "kept",
  };
  const packed = packViews(message);
  assert.equal(viewPath(packed), undefined);
  const back = unpackViews(structuredClone(packed));
  assert.ok(back.image.data instanceof Uint8ClampedArray);
  assert.deepEqual([back.image.data.byteOffset, back.image.data.length], [8, 16]);
  assert.ok(back.planes[0] instanceof Float32Array && back.planes[0].buffer instanceof SharedArrayBuffer);
  assert.deepEqual([back.planes[1]!.byteOffset, back.planes[1]!.length], [16, 2]);
  assert.deepEqual([...back.bytes], [1, 2, 3]);
  assert.deepEqual([back.header.byteOffset, back.header.byteLength], [40, 8]);
  assert.ok(back.big instanceof BigInt64Array);
  assert.equal(back.text, "kept");
  // Shared memory stays shared: a write through the rebuilt view is seen through the original.
  (unpackViews(packed).planes[1] as Int32Array)[0] = 42;
  assert.equal(message.planes[1]![0], 42);
});

test("a pool job carries its bytes as a buffer and position; the worker sees exactly the view's bytes", async () => {
  const pool = createWorkerPool<EchoJob, EchoOut>({ size: 1, workerUrl: new URL("./workers/echo-worker.ts", import.meta.url), workerData: {} });
  try {
    await pool.ready();
    const whole = new Uint8Array([100, 100, 1, 2, 3, 100]);
    let out: EchoOut | undefined;
    const posted = await postedDuring(async () => {
      out = await pool.run({ op: "bytes", data: whole.subarray(2, 5) });
    });
    assert.equal(out?.byteSum, 6, "the worker summed the view's three bytes, not the whole buffer");
    const jobs = posted.filter((m) => (m as { type?: string }).type === "job");
    assert.equal(jobs.length, 1);
    assert.equal(viewPath(jobs[0]), undefined, `a view was posted at ${viewPath(jobs[0])}`);
  } finally {
    await pool.dispose();
  }
});

test("the band threads' runs carry no views, and their rows still land in shared memory", async () => {
  const bands = await startThreadBands(1);
  assert.ok(bands);
  try {
    const disc = {
      backend: "stub",
      inputSize: { width: 32, height: 32 },
      run: async () => Uint8Array.from({ length: 32 * 32 }, (_, i) => ((i % 32) - 16) ** 2 + (Math.floor(i / 32) - 16) ** 2 < 100 ? 255 : 0),
      dispose: async () => {},
    };
    const { readFileSync } = await import("node:fs");
    const image = new Uint8Array(readFileSync(new URL("../fixtures/photos/rocket.jpg", import.meta.url)));
    let ok = false;
    const posted = await postedDuring(async () => {
      ok = (await runPipeline({ image, size: "full", semitransparency: true }, disc as never, bands)).ok;
    });
    assert.ok(ok);
    const runs = posted.filter((m) => typeof (m as { task?: unknown }).task === "string");
    assert.ok(runs.length > 0, "the helper was given work");
    for (const m of runs) assert.equal(viewPath(m), undefined, `a view was posted at ${viewPath(m)}`);
  } finally {
    await bands.dispose();
  }
});
