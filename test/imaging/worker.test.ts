import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { decodeImage } from "../../src/engine/imaging/decode.ts";
import { fixture } from "./helpers.ts";

function runInWorker(bytes: Uint8Array): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    // A worker does not inherit the parent's TypeScript loader: register tsx first.
    const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
    const job = JSON.stringify(new URL("./worker-job.ts", import.meta.url).href);
    const boot = `import(${tsx}).then((api) => { api.register(); return import(${job}); })`;
    const worker = new Worker(boot, { eval: true, workerData: bytes.slice().buffer });
    worker.once("message", (m) => {
      resolve(m as Record<string, unknown>);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

test("the imaging path (decode, orient, resize, compose, encode) runs in a worker thread", async () => {
  const result = await runInWorker(fixture("images/orient-6.jpg"));
  assert.equal(result.ok, true, String(result.title));
  assert.deepEqual([result.width, result.height], [64, 48], "upright 64 x 48");
  const png = await decodeImage(result.png as Uint8Array);
  assert.ok(png.ok && png.image.width === 64 && png.image.height === 48);
  const bad = await runInWorker(new Uint8Array([1, 2, 3]));
  assert.equal(bad.ok, false);
});
