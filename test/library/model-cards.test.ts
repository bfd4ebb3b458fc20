// Models described by a card, through the public entry ("pixeldrop", the built dist/), on
// WebAssembly: for each preset a tiny graph of its family's contract (test/support/
// family-onnx.ts: input name, size, output count, logits or probabilities) and a 32x32
// picture, with the expected mask computed here from the family's published contract
// (CONTRACTS below, written from docs/MODEL.md's table, not from the presets' code). Then
// a card beside the model, cards that do not fit their graph (refused at start, every
// difference named), a model with no card, and card objects with a wrong field.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRemover, InferenceError } from "pixeldrop";
import { decodeImage, encodePng } from "../../src/engine/imaging/index.ts";
import { FAMILY_GRAPHS, familyGraph, MASK_BIAS, MASK_WEIGHTS } from "../support/family-onnx.ts";

type Family = keyof typeof FAMILY_GRAPHS;
const SIZE = 32;

/** Each family's input contract as its own inference code states it (docs/MODEL.md, "Model cards"). */
const IMAGENET = { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };
const HALF_ONE = { mean: [0.5, 0.5, 0.5], std: [1, 1, 1] };
const CONTRACTS: Record<Family, { divideBy: "255" | "max"; mean: number[]; std: number[] }> = {
  isnet: { divideBy: "255", ...HALF_ONE },
  "isnet-general-use": { divideBy: "255", ...HALF_ONE },
  u2net: { divideBy: "max", ...IMAGENET },
  u2netp: { divideBy: "max", ...IMAGENET },
  birefnet: { divideBy: "255", ...IMAGENET },
  "birefnet-lite": { divideBy: "255", ...IMAGENET },
  ben2: { divideBy: "255", ...HALF_ONE },
  modnet: { divideBy: "255", mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] },
};

/** A picture whose brightest value is 200, so dividing by 255 and by the maximum differ. */
function picture(): Uint8ClampedArray {
  const data = new Uint8ClampedArray(SIZE * SIZE * 4);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const i = (y * SIZE + x) * 4;
      data.set([10 + Math.round((190 * x) / (SIZE - 1)), 10 + Math.round((190 * y) / (SIZE - 1)), 200 - Math.round((150 * ((x + y) % SIZE)) / (SIZE - 1)), 255], i);
    }
  }
  return data;
}

/** The mask the family's contract gives for the picture: normalise, the graph's 1x1 convolution, the sigmoid, ×255. */
function expectedMask(family: Family, rgba: Uint8ClampedArray): number[] {
  const c = CONTRACTS[family];
  let max = 0;
  for (let i = 0; i < rgba.length; i++) if (i % 4 !== 3) max = Math.max(max, rgba[i]!);
  const d = c.divideBy === "max" ? max : 255;
  const out: number[] = [];
  for (let p = 0; p < SIZE * SIZE; p++) {
    let z = MASK_BIAS;
    for (let ch = 0; ch < 3; ch++) z += MASK_WEIGHTS[ch]! * ((rgba[p * 4 + ch]! / d - c.mean[ch]!) / c.std[ch]!);
    out.push(Math.round(255 / (1 + Math.exp(-z))));
  }
  return out;
}

let dir: string;
let png: Uint8Array;
const modelPath = (family: Family) => join(dir, `${family}.onnx`);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "pd-cards-"));
  for (const family of Object.keys(FAMILY_GRAPHS) as Family[]) writeFileSync(modelPath(family), familyGraph(FAMILY_GRAPHS[family]));
  png = await encodePng({ width: SIZE, height: SIZE, data: picture() });
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function maskOf(options: Parameters<typeof createRemover>[0]): Promise<number[]> {
  const remover = await createRemover({ backend: "wasm", threads: 1, workers: 0, ...options });
  try {
    const cut = await remover.remove(png, { channels: "alpha" });
    const grey = await decodeImage(cut.png);
    assert.ok(grey.ok);
    return Array.from({ length: SIZE * SIZE }, (_, i) => grey.image.data[i * 4]!);
  } finally {
    await remover.dispose();
  }
}

function assertClose(got: number[], want: number[], what: string): void {
  let worst = 0;
  let at = 0;
  for (let i = 0; i < want.length; i++) {
    const diff = Math.abs(got[i]! - want[i]!);
    if (diff > worst) [worst, at] = [diff, i];
  }
  assert.ok(worst <= 1, `${what}: pixel ${at} is ${got[at]}, the contract gives ${want[at]} (largest difference ${worst})`);
}

for (const family of Object.keys(FAMILY_GRAPHS) as Family[]) {
  test(`preset ${family}: a graph of the family's contract gives the mask its contract computes`, async () => {
    const want = expectedMask(family, picture());
    assert.ok(Math.max(...want) - Math.min(...want) > 100, "the picture spans the mask's range");
    const got = await maskOf({ model: modelPath(family), card: { preset: family, inputSize: [SIZE, SIZE] } });
    assertClose(got, want, family);
  });
}

test("a card file beside the model (<name>.card.json) is read without being named", async () => {
  const own = mkdtempSync(join(dir, "beside-"));
  const model = join(own, "tiny-birefnet-shaped.onnx");
  writeFileSync(model, familyGraph(FAMILY_GRAPHS.birefnet));
  writeFileSync(join(own, "tiny-birefnet-shaped.card.json"), JSON.stringify({ preset: "birefnet", inputSize: [SIZE, SIZE] }));
  assertClose(await maskOf({ model }), expectedMask("birefnet", picture()), "beside card");
});

async function refusal(options: Parameters<typeof createRemover>[0]): Promise<string> {
  const err = await createRemover({ backend: "wasm", threads: 1, workers: 0, ...options }).then(
    async (r) => {
      await r.dispose();
      return undefined;
    },
    (e: unknown) => e,
  );
  assert.ok(err instanceof InferenceError, `refused at start, got ${String(err)}`);
  assert.equal(err.code, "model_unavailable");
  return err.message;
}

test("a card that does not fit its graph is refused at start, each difference named", async () => {
  const wrongInput = await refusal({ model: modelPath("birefnet"), card: { preset: "birefnet", inputSize: [SIZE, SIZE], inputName: "image" } });
  assert.match(wrongInput, /inputName "image": the graph has no such input \(its inputs: "input_image" \[1, 3, 32, 32\]\)/);
  const wrongCount = await refusal({ model: modelPath("u2net"), card: { preset: "u2net", inputSize: [SIZE, SIZE], outputCount: 1 } });
  assert.match(wrongCount, /outputCount 1: the graph has 7 outputs/);
  const wrongSize = await refusal({ model: modelPath("birefnet"), card: "birefnet" });
  assert.match(wrongSize, /preset birefnet/);
  assert.match(wrongSize, /inputSize \[1024, 1024\]: input "input_image" \[1, 3, 32, 32\] takes 32 x 32/);
  assert.match(wrongSize, /inputSize \[1024, 1024\]: output "output_image" \[1, 1, 32, 32\] gives a 32 x 32 mask/);
  const fixedNotSizes = await refusal({ model: modelPath("birefnet"), card: { preset: "modnet", inputSize: [SIZE, SIZE] } });
  assert.match(fixedNotSizes, /sizes: the card lets the size vary, but input "input_image" .* has a fixed height/);
});

test("a model file with no card and no manifest entry is refused, naming the ways to describe it", async () => {
  const message = await refusal({ model: modelPath("ben2") });
  assert.match(message, /has no manifest entry/);
  assert.match(message, /give it a card \(a preset: isnet, isnet-general-use, u2net, u2netp, birefnet, birefnet-lite, ben2, modnet; or a card file\)/);
  assert.match(message, /<name>\.card\.json beside it/);
  assert.match(await refusal({ model: modelPath("ben2"), card: "rmbg" }), /card "rmbg" is neither a preset/);
  assert.match(await refusal({ model: "small", card: "isnet" }), /model "small" is not a path to an \.onnx file/);
});

test("a card object with a wrong field is a TypeError naming the field, before any work", async () => {
  await assert.rejects(createRemover({ model: modelPath("birefnet"), card: { preset: "birefnet", inputSize: [0, 32] } }), (e: unknown) => {
    assert.ok(e instanceof TypeError);
    assert.match(e.message, /inputSize\.0: /);
    return true;
  });
  await assert.rejects(createRemover({ model: modelPath("birefnet"), card: { preset: "birefnet", inputSzie: [32, 32] } as never }), /inputSzie/);
  await assert.rejects(createRemover({ model: modelPath("birefnet"), card: { preset: "sam" } }), /preset: must be one of isnet, /);
  await assert.rejects(createRemover({ model: modelPath("birefnet"), card: { preset: "birefnet", outputName: "a", outputIndex: 0 } }), /outputIndex: give outputName or outputIndex, not both/);
});
