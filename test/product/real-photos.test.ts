// The whole pipeline with the real IS-Net model (the default, WASM) on openly licensed photos:
// checks the mask itself, not just that a PNG came back: the subject is opaque, the
// background is transparent, the output is upright RGBA at the tier's size.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createMaskSession, type MaskSession } from "../../src/engine/inference/session.ts";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { runPipeline } from "../../src/engine/pipeline/pipeline.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../../src/engine/assets/paths.ts";
import { fixture } from "../support/harness.ts";
import { alphaAt, PHOTO_CASES } from "../support/photo-masks.ts";
import { DEFAULT_MODEL, DEFAULT_MODEL_FILE } from "../support/default-model.ts";

let session: MaskSession;

before(async () => {
  const model = await resolveModel({ model: DEFAULT_MODEL, modelsDir: PACKAGE_MODELS_DIR });
  assert.ok(model.ok, `models/${DEFAULT_MODEL_FILE} must be assembled (npm ci does it)`);
  session = sameInputOnce(await createMaskSession({ model: model.entry, modelPath: model.path, backend: "wasm", threads: 2, wasmDir: PACKAGE_WASM_DIR }));
});
after(() => session?.dispose());

/**
 * The model sees the whole photo at its own input size whatever the tier, so a photo's
 * second tier hands the session the very bytes of its first. Those bytes get the mask the
 * session gave for them (a run costs seconds); the preview test then checks the pipeline's
 * own work. Were the preview's model input ever different, the session would run again.
 */
function sameInputOnce(inner: MaskSession): MaskSession {
  let last: { input: Uint8Array; mask: Uint8Array } | undefined;
  return {
    backend: inner.backend,
    inputSize: inner.inputSize,
    async run(rgb) {
      if (last && Buffer.compare(last.input, rgb) === 0) return last.mask.slice();
      const mask = await inner.run(rgb);
      last = { input: rgb.slice(), mask: mask.slice() };
      return mask;
    },
    dispose: () => inner.dispose(),
  };
}

/** Each photo's cut-out per size, made once: the preview test compares with a full one made before it. */
const made = new Map<string, ReturnType<typeof cutOnce>>();
const cutout = (name: string, size: "preview" | "full") => {
  const key = `${name} ${size}`;
  if (!made.has(key)) made.set(key, cutOnce(name, size));
  return made.get(key)!;
};

async function cutOnce(name: string, size: "preview" | "full") {
  const result = await runPipeline({ image: fixture(name), size, semitransparency: true }, session);
  assert.ok(result.ok, result.ok ? "" : result.title);
  const decoded = await decodeImage(result.png);
  assert.ok(decoded.ok);
  assert.equal(decoded.image.width, result.width);
  assert.equal(decoded.image.height, result.height);
  return { result, image: decoded.image };
}

const cases = PHOTO_CASES;

for (const c of cases) {
  test(`${c.name}: subject opaque, background transparent`, async () => {
    const { image, result } = await cutout(c.name, "full");
    for (const [x, y] of c.subject) assert.ok(alphaAt(image, x, y) > 200, `subject at ${x},${y} alpha ${alphaAt(image, x, y)}`);
    for (const [x, y] of c.background) assert.ok(alphaAt(image, x, y) < 30, `background at ${x},${y} alpha ${alphaAt(image, x, y)}`);
    // The foreground box lies inside the image and is not the whole frame for these photos.
    const f = result.foreground;
    assert.ok(f.width > 0 && f.height > 0 && f.left + f.width <= result.width && f.top + f.height <= result.height);
  });
}

test("preview tier is at most 250,000 pixels with the aspect kept, and masks agree", async () => {
  const full = await cutout("photos/rocket.jpg", "full");
  const preview = await cutout("photos/rocket.jpg", "preview");
  assert.equal(full.result.width, 640);
  assert.ok(preview.result.width * preview.result.height <= 250_000);
  assert.ok(Math.abs(preview.result.width / preview.result.height - 640 / 427) < 0.01);
  for (const [x, y] of cases[2].subject) assert.ok(alphaAt(preview.image, x, y) > 200);
  for (const [x, y] of cases[2].background) assert.ok(alphaAt(preview.image, x, y) < 30);
});
