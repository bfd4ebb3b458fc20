// A pool worker gives back what a large job made it hold (src/engine/pipeline/release-memory.ts):
// which jobs are followed by a collection and an idle release, and that the jobs after
// either (large or small, queued behind it or sent once the pool was idle) still give the
// same bytes: after a release the decoder starts a fresh instance and the bands take fresh memory.
// The release is on where gc() is exposed (the image runs node --expose-gc): this file
// exposes it for its own thread and for every worker it starts, in a process of its own
// (scripts/test-plan.mjs, OWN_PROCESS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Image } from "imagescript";
import { createWorkerPool } from "../../src/engine/inference/pool.ts";
import { moduleBeside } from "../../src/engine/inference/module-url.ts";
import type { PipelineJob, PipelineResult } from "../../src/engine/pipeline/pipeline.ts";
import { createEngine, type PipelineWorkerInfo } from "../../src/engine/pipeline/engine.ts";
import { RELEASE_AFTER_PIXELS, RELEASE_WHEN_IDLE_MS, releasesAfter } from "../../src/engine/pipeline/release-memory.ts";
import { fixture } from "../support/harness.ts";

// Workers started after the flag is set get gc(); this thread takes it from a new context.
setFlagsFromString("--expose-gc");
(globalThis as { gc?: unknown }).gc ??= runInNewContext("gc");
const noGc = typeof (globalThis as { gc?: unknown }).gc !== "function" && "gc() could not be exposed";

/** The start of a PNG: signature, IHDR with these dimensions, then an empty IDAT (the header reader stops there). */
function pngHeader(width: number, height: number): Uint8Array {
  const out = new Uint8Array(8 + 25 + 12);
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(out.buffer);
  view.setUint32(8, 13);
  out.set(new TextEncoder().encode("IHDR"), 12);
  view.setUint32(16, width);
  view.setUint32(20, height);
  out.set([8, 6, 0, 0, 0], 24); // 8-bit RGBA
  view.setUint32(33, 0);
  out.set(new TextEncoder().encode("IDAT"), 37);
  return out;
}

test("jobs over RELEASE_AFTER_PIXELS are followed by a collection and release; smaller or unreadable ones are not", { skip: noGc }, () => {
  assert.equal(RELEASE_AFTER_PIXELS, 4_000_000);
  assert.equal(releasesAfter(pngHeader(2000, 2000)), false, "4 MP exactly");
  assert.equal(releasesAfter(pngHeader(2001, 2000)), true, "just over 4 MP");
  assert.equal(releasesAfter(pngHeader(4242, 2828)), true, "12 MP");
  assert.equal(releasesAfter(fixture("photos/rocket.jpg")), false, "a small photo");
  assert.equal(releasesAfter(new Uint8Array([1, 2, 3])), false, "not an image");
});

test("after a large job is collected (a job queued behind it) or released (the pool idle), the next large and small jobs give the same bytes", { skip: noGc }, async () => {
  // 4.32 MP: over the limit, so the worker releases after it.
  const width = 2400;
  const height = 1800;
  const img = new Image(width, height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      img.bitmap[i] = (x * 255) / width;
      img.bitmap[i + 1] = (y * 255) / height;
      img.bitmap[i + 2] = ((x ^ y) & 0xff) >> 1;
      img.bitmap[i + 3] = 255;
    }
  }
  const large = await img.encodeJPEG(85);
  assert.ok(releasesAfter(large));
  const small = fixture("photos/rocket.jpg");

  // The engine's own pool, read directly: a release that threw would kill the worker while
  // idle, and the pool would replace it without any job failing.
  const pool = createWorkerPool<PipelineJob, PipelineResult>({
    size: 1,
    workerUrl: moduleBeside(new URL("../../src/engine/pipeline/engine.ts", import.meta.url).href, "./pipeline-worker"),
    workerData: { model: { inputSize: [64, 64] }, modelPath: "", backend: "stub", threads: 2, wasmDir: "", stubDelayMs: 0 },
  });
  try {
    const { workers } = await pool.ready();
    assert.equal((workers[0] as PipelineWorkerInfo).bandHelpers, 1);
    const run = async (image: Uint8Array) => {
      const bytes = image.slice();
      const r = await pool.run({ image: bytes, size: "full", semitransparency: true }, [bytes.buffer]);
      assert.ok(r.ok, !r.ok ? r.title : "");
      return r;
    };
    // Sent together, the second waits in the queue: the worker collects before it and
    // releases nothing. Each job awaited alone leaves the pool idle: the worker releases
    // before the next one arrives.
    const [first, atOnce] = await Promise.all([run(large), run(large)]);
    const afterRelease = await run(large);
    const [, smallAfter] = await Promise.all([run(large), run(small)]);
    const smallAfterRelease = await run(small);
    assert.equal(first.width, width);
    assert.ok(Buffer.from(atOnce.png).equals(Buffer.from(first.png)), "a large job right after a large one: same PNG");
    assert.ok(Buffer.from(afterRelease.png).equals(Buffer.from(first.png)), "a large job after a release: same PNG");
    assert.ok(Buffer.from(smallAfterRelease.png).equals(Buffer.from(smallAfter.png)), "a small job after a release: same PNG");
    assert.equal(pool.stats().restarts, 0, "the worker lived through its collections and releases");
  } finally {
    await pool.dispose();
  }
});

test("the service's engine collects its calling thread once idle after a large job, not after small ones; the library's never", { skip: noGc }, async () => {
  const g = globalThis as { gc?: () => void };
  const realGc = g.gc!;
  let collections = 0;
  g.gc = () => {
    collections++;
    realGc();
  };
  const session = { model: { inputSize: [64, 64] } as never, modelPath: "", backend: "stub" as const, threads: 1, wasmDir: "", stubDelayMs: 0 };
  const engine = createEngine({ poolSize: 1, session, collectCallingThread: true });
  const library = createEngine({ poolSize: 1, session });
  const large = new Image(2400, 1800);
  large.fill(0x8090a0ff);
  const largeJpeg = await large.encodeJPEG(80);
  try {
    await Promise.all([engine.whenReady(), library.whenReady()]);
    const idle = () => new Promise((r) => setTimeout(r, RELEASE_WHEN_IDLE_MS + 500));
    const runOn = async (e: typeof engine, image: Uint8Array) => assert.ok((await e.run({ image: image.slice(), size: "preview", semitransparency: true })).ok);
    await runOn(library, largeJpeg);
    await idle();
    assert.equal(collections, 0, "the library leaves its caller's heap alone");
    const run = (image: Uint8Array) => runOn(engine, image);
    await run(fixture("photos/rocket.jpg"));
    await idle();
    assert.equal(collections, 0, "a small job leaves nothing to collect for");
    await run(largeJpeg);
    await run(fixture("photos/rocket.jpg")); // a small job right after does not cancel what is owed
    assert.equal(collections, 0, "nothing is collected while jobs follow each other");
    await idle();
    assert.equal(collections, 1, "one collection after the idle pause");
  } finally {
    g.gc = realGc;
    await Promise.all([engine.dispose(), library.dispose()]);
  }
});
