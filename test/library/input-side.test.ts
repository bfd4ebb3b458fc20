// The library's inputSide option through the public entry, on a tiny size-free model (a
// graph traced like IS-Net and rewritten as models/ are at assemble time): the model's own
// size by default, a side it takes when asked (and reported as modelInput), a RangeError
// for a side it does not take or a value that is no side at all.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRemover, ImageError, type Remover } from "pixeldrop";
import { encodePng } from "../../src/engine/imaging/index.ts";
import { deriveModel } from "../../src/engine/assets/derive.ts";
import { tinyIsNetModel } from "../support/tiny-onnx.ts";
import { tracedIsNetModel } from "../support/traced-onnx.ts";

const TRACED = 64;
/** The card's own size, below the largest it takes: a run may ask for more than the default. */
const OWN = 32;
let dir: string;
let remover: Remover;
let photo: Uint8Array;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "pd-input-side-"));
  const bytes = deriveModel(tracedIsNetModel(TRACED), { sizeFree: { keepOutputs: ["output"] } });
  const entry = {
    ...tinyIsNetModel(OWN, OWN).entry,
    file: "traced.onnx",
    sha256: createHash("sha256").update(bytes).digest("hex"),
    bytes: bytes.length,
    sizes: { multipleOf: 4, min: 16, max: TRACED },
  };
  writeFileSync(join(dir, "traced.onnx"), bytes);
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({ version: 1, models: { traced: entry } }));
  remover = await createRemover({ model: join(dir, "traced.onnx"), backend: "wasm", threads: 1, workers: 0 });
  const rgba = new Uint8ClampedArray(120 * 80 * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 37) % 251));
  photo = await encodePng({ width: 120, height: 80, data: rgba });
});

after(async () => {
  await remover?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test("the model's own size by default; a side it takes when asked, whatever the picture", async () => {
  const own = await remover.remove(photo);
  assert.deepEqual(own.modelInput, { width: OWN, height: OWN });
  assert.deepEqual([own.width, own.height], [120, 80]);
  const smaller = await remover.remove(photo, { inputSide: 16 });
  assert.deepEqual(smaller.modelInput, { width: 16, height: 16 });
  assert.deepEqual([smaller.width, smaller.height], [120, 80], "the output size does not follow the model's input");
  assert.notDeepEqual(smaller.png, own.png, "another input gives another mask");
  const larger = await remover.remove(photo, { inputSide: TRACED });
  assert.deepEqual(larger.modelInput, { width: TRACED, height: TRACED }, "a side above the model's own, within its sizes");
  assert.deepEqual((await remover.remove(photo)).png, own.png, "the default again after a larger run");
});

test("a side the model does not take, or no side at all, is a RangeError naming what it takes; the remover stays usable", async () => {
  await assert.rejects(remover.remove(photo, { inputSide: 30 }), (e: unknown) => e instanceof RangeError && /multiples of 4 from 16 to 64, not 30x30/.test(e.message));
  await assert.rejects(remover.remove(photo, { inputSide: 128 }), RangeError);
  await assert.rejects(remover.remove(photo, { inputSide: 1.5 }), /inputSide must be a positive integer/);
  await assert.rejects(remover.remove(photo, { inputSide: "64" as never }), RangeError);
  await assert.rejects(remover.remove(new Uint8Array([1, 2, 3]), { inputSide: 32 }), ImageError, "the image is still checked");
  assert.deepEqual((await remover.remove(photo, { inputSide: 20 })).modelInput, { width: 20, height: 20 });
});
