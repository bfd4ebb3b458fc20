// The GPU session thread's batcher (src/engine/inference/mask-batcher.ts) with a session
// whose runs end when the test says: a lone ask runs at once; asks made while a run is on
// the GPU go together in the next run, up to maxBatch, by size; each gets its own mask; a
// failed run fails the asks it took and no other.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createMaskBatcher } from "../../src/engine/inference/mask-batcher.ts";
import type { InputSize } from "../../src/engine/inference/session.ts";

const A: InputSize = { width: 4, height: 4 };
const B: InputSize = { width: 8, height: 8 };
const picture = (v: number, size = A) => new Uint8Array(size.width * size.height * 3).fill(v);
const tick = () => new Promise((r) => setImmediate(r));

/** A session whose runs wait for finish(); each mask is its picture's first byte, repeated. */
function heldSession(maxBatch: number) {
  const runs: { pictures: number[]; size: InputSize; end(fail?: Error): void }[] = [];
  const start = (pictures: readonly Uint8Array[], size: InputSize) =>
    new Promise<Uint8Array[]>((resolve, reject) =>
      runs.push({
        pictures: pictures.map((p) => p[0]!),
        size,
        end: (fail) => (fail ? reject(fail) : resolve(pictures.map((p) => new Uint8Array(size.width * size.height).fill(p[0]!)))),
      }),
    );
  return {
    runs,
    session: {
      maxBatch,
      run: async (rgb: Uint8Array, size?: InputSize) => (await start([rgb], size ?? A))[0]!,
      runBatch: (pictures: readonly Uint8Array[], size?: InputSize) => start(pictures, size ?? A),
    },
  };
}

test("a lone ask runs at once; asks made during a run go together in the next, up to maxBatch, each with its own mask", async () => {
  const { runs, session } = heldSession(3);
  const batcher = createMaskBatcher(session);
  const first = batcher.ask(picture(1), A);
  await tick();
  assert.equal(runs.length, 1, "the first ask did not wait for company");
  assert.deepEqual(runs[0]!.pictures, [1]);
  const waiting = [2, 3, 4, 5].map((v) => batcher.ask(picture(v), A));
  await tick();
  assert.equal(runs.length, 1, "nothing starts while a run is on the GPU");
  runs[0]!.end();
  assert.equal((await first)[0], 1);
  await tick();
  assert.deepEqual(runs[1]!.pictures, [2, 3, 4], "the next run takes the waiting asks, up to maxBatch");
  runs[1]!.end();
  await tick();
  assert.deepEqual(runs[2]!.pictures, [5]);
  runs[2]!.end();
  const masks = await Promise.all(waiting);
  assert.deepEqual(masks.map((m) => m[0]), [2, 3, 4, 5], "each ask gets its own picture's mask");
  assert.deepEqual(batcher.counts(), { runs: 3, pictures: 5 });
});

test("a batch is of one size: the first waiting ask's, the others keep their place", async () => {
  const { runs, session } = heldSession(4);
  const batcher = createMaskBatcher(session);
  const asks = [batcher.ask(picture(1), A), batcher.ask(picture(2), B), batcher.ask(picture(3), A), batcher.ask(picture(4), B)];
  await tick();
  runs[0]!.end();
  await tick();
  assert.deepEqual(runs[1]!.pictures, [2, 4]);
  assert.deepEqual(runs[1]!.size, B);
  runs[1]!.end();
  await tick();
  assert.deepEqual(runs[2]!.pictures, [3]);
  runs[2]!.end();
  assert.deepEqual((await Promise.all(asks)).map((m) => m.length), [16, 64, 16, 64]);
});

test("a run that fails fails the asks it took, and the next run goes on", async () => {
  const { runs, session } = heldSession(2);
  const batcher = createMaskBatcher(session);
  const first = batcher.ask(picture(1), A);
  const [a, b, c] = [batcher.ask(picture(2), A), batcher.ask(picture(3), A), batcher.ask(picture(4), A)];
  await tick();
  runs[0]!.end();
  await first;
  await tick();
  runs[1]!.end(new Error("device lost"));
  await assert.rejects(a, /device lost/);
  await assert.rejects(b, /device lost/);
  await tick();
  runs[2]!.end();
  assert.equal((await c)[0], 4);
});

test("a session that takes one picture a run is never asked for a batch", async () => {
  const { runs, session } = heldSession(1);
  const batcher = createMaskBatcher({ run: session.run, maxBatch: 1 });
  const asks = [1, 2, 3].map((v) => batcher.ask(picture(v), A));
  for (let i = 0; i < 3; i++) {
    await tick();
    assert.equal(runs[i]!.pictures.length, 1);
    runs[i]!.end();
  }
  await Promise.all(asks);
});
