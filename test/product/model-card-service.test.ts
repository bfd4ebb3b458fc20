// The service with a model of its operator's own, named by MODEL and fed by MODEL_CARD
// (parsed in src/config.ts): the engine is built from the environment as in production,
// on WebAssembly, with a tiny graph of BiRefNet's contract (test/support/family-onnx.ts).
// /readyz names the model and its card, and a test-key call returns a cut-out. A card that
// does not fit the graph, or a model with no card, stops the start with a ConfigError
// naming the settings, before any request.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/config.ts";
import { encodePng } from "../../src/engine/imaging/index.ts";
import { FAMILY_GRAPHS, familyGraph } from "../support/family-onnx.ts";
import { makeHarness } from "../support/harness.ts";

let dir: string;
let model: string;
let card: string;
const settings = (env: Record<string, string>) => ({ INFERENCE_BACKEND: "wasm", POOL_SIZE: "1", THREADS_PER_SESSION: "1", MODEL: model, ...env });

before(() => {
  dir = mkdtempSync(join(tmpdir(), "pd-card-service-"));
  model = join(dir, "tiny-birefnet-shaped.onnx");
  card = join(dir, "birefnet-32.json");
  writeFileSync(model, familyGraph(FAMILY_GRAPHS.birefnet));
  writeFileSync(card, JSON.stringify({ preset: "birefnet", inputSize: [32, 32] }));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("MODEL and MODEL_CARD: /readyz names both, and a test-key call gives a cut-out", async () => {
  const h = await makeHarness({ embedded: true, engine: "from-config", env: settings({ MODEL_CARD: card }) });
  try {
    await h.services.engine!.whenReady();
    const ready = await h.app.request("/readyz");
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { checks: { models: Record<string, unknown> } };
    assert.equal(body.checks.models.model, "tiny-birefnet-shaped", "the model the engine runs, named by its file");
    assert.equal(body.checks.models.card, card);
    const { testKey } = await h.customer();
    const data = new Uint8ClampedArray(48 * 40 * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 37) % 251));
    const res = await h.removebg(testKey, { image_file: await encodePng({ width: 48, height: 40, data }) });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("x-pd-model"), "tiny-birefnet-shaped/card", "a card of the operator's own: the file's name and \"card\"");
  } finally {
    await h.close();
  }
});

test("a card that does not fit the graph, or no card at all, stops the start naming MODEL and MODEL_CARD", async () => {
  await assert.rejects(makeHarness({ embedded: true, engine: "from-config", env: settings({ MODEL_CARD: "u2net" }) }), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /^MODEL=.*tiny-birefnet-shaped\.onnx MODEL_CARD=u2net: model file .* does not match its card \(preset u2net\): inputSize \[320, 320\]/);
    return true;
  });
  await assert.rejects(makeHarness({ embedded: true, engine: "from-config", env: settings({}) }), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /^MODEL=.*: model file .* has no manifest entry .* give it a card/);
    return true;
  });
});
