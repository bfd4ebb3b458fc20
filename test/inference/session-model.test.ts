// The real default IS-Net model on onnxruntime-web (WebAssembly) and, when it loads,
// onnxruntime-node. Slow (seconds per run on 2 cores), so few runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Image } from "imagescript";
import { resolveModel, type ResolvedModel } from "../../src/engine/inference/manifest.ts";
import { createMaskSession, type MaskSession } from "../../src/engine/inference/session.ts";
import { DEFAULT_MODEL, DEFAULT_MODEL_FILE } from "../support/default-model.ts";

const modelsDir = fileURLToPath(new URL("../../models/", import.meta.url));
const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));
const photos = fileURLToPath(new URL("../fixtures/photos/", import.meta.url));
const haveModel = existsSync(`${modelsDir}${DEFAULT_MODEL_FILE}`) && existsSync(`${wasmDir}ort-wasm-simd-threaded.wasm`);
const SIZE = 1024;

async function defaultModel(): Promise<ResolvedModel> {
  const r = await resolveModel({ model: DEFAULT_MODEL, modelsDir });
  if (!r.ok) throw new Error(r.title);
  return r;
}

/** A red disc of radius 250 on a flat blue-grey background. */
function discImage(): Uint8Array {
  const rgb = new Uint8Array(SIZE * SIZE * 3);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const i = (y * SIZE + x) * 3;
      const inside = Math.hypot(x - 512, y - 512) < 250;
      rgb[i] = inside ? 220 : 90;
      rgb[i + 1] = inside ? 40 : 140;
      rgb[i + 2] = inside ? 40 : 200;
    }
  }
  return rgb;
}

async function photoRgb(name: string): Promise<Uint8Array> {
  const img = (await Image.decode(readFileSync(photos + name))).resize(SIZE, SIZE);
  const rgba = img.bitmap;
  const rgb = new Uint8Array(SIZE * SIZE * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
    rgb[j] = rgba[i]!;
    rgb[j + 1] = rgba[i + 1]!;
    rgb[j + 2] = rgba[i + 2]!;
  }
  return rgb;
}

/** Mean of the mask over a square [x0, x0+n) x [y0, y0+n). */
function regionMean(mask: Uint8Array, x0: number, y0: number, n: number): number {
  let sum = 0;
  for (let y = y0; y < y0 + n; y++) for (let x = x0; x < x0 + n; x++) sum += mask[y * SIZE + x]!;
  return sum / (n * n);
}

const wasmMasks: { disc?: Uint8Array } = {};

test("wasm session on the default model: the disc is foreground, the background is not", { skip: !haveModel }, async () => {
  const m = await defaultModel();
  const s = await createMaskSession({ model: m.entry, modelPath: m.path, backend: "wasm", threads: 2, wasmDir });
  try {
    assert.equal(s.backend, "wasm");
    assert.deepEqual(s.inputSize, { width: SIZE, height: SIZE });
    const mask = await s.run(discImage());
    assert.equal(mask.length, SIZE * SIZE);
    assert.ok(regionMean(mask, 462, 462, 100) > 240, "disc centre should be foreground");
    assert.ok(regionMean(mask, 0, 0, 100) < 15, "background corner should be background");
    // The mask's area is about the disc's (pi * 250^2 of 1024^2 = 18.7%).
    const mean = mask.reduce((a, v) => a + v, 0) / mask.length / 255;
    assert.ok(mean > 0.15 && mean < 0.23, `foreground fraction ${mean}`);
    wasmMasks.disc = mask;

    // A real photo: the cat fills the middle; the top-left corner is dark background.
    if (existsSync(photos + "chelsea.png")) {
      const cat = await s.run(await photoRgb("chelsea.png"));
      assert.ok(regionMean(cat, 400, 400, 200) > 200, "cat face should be foreground");
      assert.ok(regionMean(cat, 0, 0, 60) < 40, "top-left corner should be background");
    }

    await assert.rejects(s.run(new Uint8Array(12)), (err: unknown) => (err as { code?: string }).code === "inference_failed");
  } finally {
    await s.dispose();
  }
  await assert.rejects(s.run(discImage()), (err: unknown) => (err as { code?: string }).code === "shutting_down");
});

async function nativeSession(m: ResolvedModel): Promise<MaskSession | undefined> {
  try {
    return await createMaskSession({ model: m.entry, modelPath: m.path, backend: "native", threads: 2, wasmDir });
  } catch (err) {
    if ((err as { code?: string }).code === "model_unavailable" && /onnxruntime-node/.test((err as Error).message)) return undefined;
    throw err;
  }
}

test("native session agrees with wasm on the same input (skipped without onnxruntime-node)", { skip: !haveModel }, async (t) => {
  const m = await defaultModel();
  const s = await nativeSession(m);
  if (!s) return t.skip("onnxruntime-node did not load");
  try {
    assert.equal(s.backend, "native");
    const mask = await s.run(discImage());
    if (!wasmMasks.disc) return t.skip("wasm test did not run");
    let diff = 0;
    for (let i = 0; i < mask.length; i++) diff += Math.abs(mask[i]! - wasmMasks.disc[i]!);
    assert.ok(diff / mask.length < 1, `mean absolute difference ${diff / mask.length}`);
  } finally {
    await s.dispose();
  }
});

test("webgpu without navigator.gpu is a clear start error", { skip: !haveModel }, async () => {
  const m = await defaultModel();
  await assert.rejects(
    createMaskSession({ model: m.entry, modelPath: m.path, backend: "webgpu", threads: 1, wasmDir }),
    (err: unknown) => (err as { code?: string }).code === "model_unavailable" && /navigator\.gpu/.test((err as Error).message),
  );
});

test("a manifest output name the graph lacks fails at start, not per request", { skip: !haveModel }, async () => {
  const m = await defaultModel();
  const wrong = { ...m.entry, outputName: "mask" };
  await assert.rejects(
    createMaskSession({ model: wrong, modelPath: m.path, backend: "wasm", threads: 2, wasmDir }),
    (err: unknown) => (err as { code?: string }).code === "model_unavailable" && /no output "mask"/.test((err as Error).message),
  );
});
