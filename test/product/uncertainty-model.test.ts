// X-PD-Uncertainty with the real default IS-Net model, through the public endpoint: a
// studio portrait (astronaut.png, NASA's official portrait, public domain) scores lower
// than a cluttered scene (rocket.jpg, a launch pad with its tower, SpaceX, CC0). Two
// preview-size calls on WebAssembly: slow (tens of seconds), so just these two.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { createInlineEngine } from "../../src/engine/pipeline/inline-engine.ts";
import { fixture, makeHarness, type Harness } from "../support/harness.ts";
import { DEFAULT_MODEL, DEFAULT_MODEL_FILE, DEFAULT_MODEL_LABEL } from "../support/default-model.ts";

const modelsDir = fileURLToPath(new URL("../../models/", import.meta.url));
const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));
const haveModel = existsSync(`${modelsDir}${DEFAULT_MODEL_FILE}`) && existsSync(`${wasmDir}ort-wasm-simd-threaded.wasm`);

let h: Harness | undefined;
before(async () => {
  if (!haveModel) return;
  const m = await resolveModel({ model: DEFAULT_MODEL, modelsDir });
  if (!m.ok) throw new Error(m.title);
  const session = await createMaskSession({ model: m.entry, modelPath: m.path, backend: "wasm", threads: 1, wasmDir });
  h = await makeHarness({ embedded: true, engine: createInlineEngine(session) });
});
after(() => h?.close());

async function uncertaintyOf(key: string, photo: string): Promise<number> {
  const res = await h!.removebg(key, { image_file: fixture(`photos/${photo}`), size: "preview" });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get("x-pd-model"), DEFAULT_MODEL_LABEL);
  await res.arrayBuffer();
  const u = Number(res.headers.get("x-pd-uncertainty"));
  assert.ok(u >= 0 && u <= 1, `${photo}: ${u}`);
  return u;
}

test("a clean studio portrait is less uncertain than a cluttered scene", { skip: !haveModel }, async () => {
  const { liveKey } = await h!.customer({ creditKrw: 1000 });
  const studio = await uncertaintyOf(liveKey, "astronaut.png");
  const cluttered = await uncertaintyOf(liveKey, "rocket.jpg");
  assert.ok(studio < cluttered, `studio ${studio} < cluttered ${cluttered}`);
  // Measured 0.027 and 0.573 when written: far apart, not a coin toss.
  assert.ok(cluttered - studio > 0.2, `studio ${studio}, cluttered ${cluttered}`);
});
