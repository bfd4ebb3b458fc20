// The whole pipeline with the real IS-Net model (small, WASM) on openly licensed photos:
// checks the mask itself, not just that a PNG came back: the subject is opaque, the
// background is transparent, the output is upright RGBA at the tier's size.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createMaskSession, type MaskSession } from "../../src/inference/session.ts";
import { resolveModel } from "../../src/inference/manifest.ts";
import { decodeImage } from "../../src/imaging/index.ts";
import { runPipeline } from "../../src/product/pipeline.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../../src/assets/paths.ts";
import { fixture } from "../support/harness.ts";

let session: MaskSession;

before(async () => {
  const model = await resolveModel({ model: "small", modelsDir: PACKAGE_MODELS_DIR });
  assert.ok(model.ok, "models/isnet-small.onnx must be assembled (npm ci does it)");
  session = await createMaskSession({ model: model.entry, modelPath: model.path, backend: "wasm", threads: 2, wasmDir: PACKAGE_WASM_DIR });
});
after(() => session?.dispose());

/** Mean alpha of a 9x9 window around a point given as fractions of the size. */
function alphaAt(img: { width: number; height: number; data: Uint8ClampedArray }, fx: number, fy: number): number {
  const cx = Math.round(fx * (img.width - 1));
  const cy = Math.round(fy * (img.height - 1));
  let sum = 0;
  let n = 0;
  for (let y = Math.max(0, cy - 4); y <= Math.min(img.height - 1, cy + 4); y++) {
    for (let x = Math.max(0, cx - 4); x <= Math.min(img.width - 1, cx + 4); x++) {
      sum += img.data[(y * img.width + x) * 4 + 3];
      n++;
    }
  }
  return sum / n;
}

async function cutout(name: string, size: "preview" | "full") {
  const result = await runPipeline({ image: fixture(name), size, semitransparency: true }, session);
  assert.ok(result.ok, result.ok ? "" : result.title);
  const decoded = await decodeImage(result.png);
  assert.ok(decoded.ok);
  assert.equal(decoded.image.width, result.width);
  assert.equal(decoded.image.height, result.height);
  return { result, image: decoded.image };
}

const cases: { name: string; subject: [number, number][]; background: [number, number][] }[] = [
  // Portrait: face and suit opaque; the plain studio backdrop transparent.
  { name: "photos/astronaut.png", subject: [[0.45, 0.25], [0.4, 0.7]], background: [[0.05, 0.05], [0.95, 0.05], [0.9, 0.35]] },
  // Cat: its face opaque; the blurred room on the right transparent.
  { name: "photos/chelsea.png", subject: [[0.4, 0.5], [0.6, 0.3]], background: [[0.97, 0.15], [0.96, 0.5]] },
  // Launch pad at night: the rocket opaque, the dark sky transparent.
  { name: "photos/rocket.jpg", subject: [[0.5, 0.5], [0.5, 0.75]], background: [[0.3, 0.1], [0.7, 0.1], [0.85, 0.3]] },
];

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
