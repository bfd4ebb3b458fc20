// The derived int8 model against the fp16 model it comes from, through the library's
// public entry on WebAssembly: on the fixture photos its alpha mask must agree with
// `medium`'s (IoU of the foregrounds at alpha >= 0.5, and the mean alpha difference).
// The preview size keeps the comparison cheap (inference is at the model's 1024² either way).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRemover, type Remover } from "pixeldrop";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { scoreMask } from "../../bench/quality-score.ts";

/** Measured on the cat: 0.9909 (the astronaut gave 0.9998; the cat's fur is the harder edge, so it alone is run). */
const MIN_IOU = 0.98;
/**
 * Mean |alpha difference| per pixel, alpha in 0..1: measured 0.0035 for int8 and 0.0060 for
 * `small` (whose IoU, 0.9908, is as good: its loss is in the soft edges), so this bound is
 * what tells our model from the per-tensor one.
 */
const MAX_MEAN_ABS = 0.0045;
const PHOTOS = ["chelsea.png"];

const models = new URL("../../models/", import.meta.url);
const assembled = ["isnet-int8.onnx", "isnet-medium.onnx"].every((f) => existsSync(new URL(f, models)));
let int8: Remover;
let medium: Remover;

before(async () => {
  if (!assembled) return;
  int8 = await createRemover({ model: "int8", backend: "wasm", threads: 2, workers: 0 });
  medium = await createRemover({ model: "medium", backend: "wasm", threads: 2, workers: 0 });
});
after(async () => {
  await int8?.dispose();
  await medium?.dispose();
});

async function alpha(remover: Remover, photo: Uint8Array): Promise<Uint8Array> {
  const out = await remover.remove(photo, { size: "preview", channels: "alpha" });
  const d = await decodeImage(out.png);
  assert.ok(d.ok);
  const { data } = d.image;
  return Uint8Array.from({ length: data.length / 4 }, (_, i) => data[i * 4]!);
}

for (const name of PHOTOS) {
  test(`${name}: the int8 model's mask agrees with medium's`, { skip: !assembled && "models not assembled" }, async () => {
    const photo = new Uint8Array(readFileSync(new URL(`../fixtures/photos/${name}`, import.meta.url)));
    const [a, b] = [await alpha(int8, photo), await alpha(medium, photo)];
    const s = scoreMask(a, b);
    const meanAbs = (s.sad * 1000) / a.length;
    assert.ok(s.iou >= MIN_IOU, `IoU ${s.iou.toFixed(4)} < ${MIN_IOU}`);
    assert.ok(meanAbs <= MAX_MEAN_ABS, `mean |alpha difference| ${meanAbs.toFixed(4)} > ${MAX_MEAN_ABS}`);
    console.log(`# ${name}: IoU ${s.iou.toFixed(4)}, mean |alpha difference| ${meanAbs.toFixed(4)}`);
  });
}
