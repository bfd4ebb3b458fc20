// The model file is read once per session and hashed while the session starts from the
// same bytes (src/engine/inference/model-bytes.ts): a file of the right size with other bytes
// must fail the session's start with model_unavailable, and the library, told so, checks
// and rebuilds the file (src/engine/library/open-engine.ts).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { InferenceError } from "../../src/engine/inference/errors.ts";
import { resolveModel } from "../../src/engine/inference/manifest.ts";
import { isModelMismatch, readModelBytes } from "../../src/engine/inference/model-bytes.ts";
import { createMaskSession } from "../../src/engine/inference/session.ts";
import { DEFAULT_MODEL, DEFAULT_MODEL_FILE } from "../support/default-model.ts";

const modelsDir = fileURLToPath(new URL("../../models/", import.meta.url));
const wasmDir = fileURLToPath(new URL("../../wasm/", import.meta.url));
const haveModel = existsSync(`${modelsDir}${DEFAULT_MODEL_FILE}`) && existsSync(`${wasmDir}ort-wasm-simd-threaded.wasm`);
const work = mkdtempSync(join(tmpdir(), "pd-model-bytes-"));
after(() => rmSync(work, { recursive: true, force: true }));

test("readModelBytes: the bytes as read, verified against the manifest's sha256, or a mismatch error", async () => {
  const path = join(work, "m.onnx");
  const content = new TextEncoder().encode("not really a model, but bytes to hash");
  writeFileSync(path, content);
  const sha256 = createHash("sha256").update(content).digest("hex");

  const good = await readModelBytes(path, { sha256 });
  assert.deepEqual([...good.bytes], [...content]);
  await good.verified;

  const bad = await readModelBytes(path, { sha256: "0".repeat(64) });
  const err = await bad.verified.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof InferenceError && err.code === "model_unavailable", String(err));
  assert.ok(isModelMismatch(err), err.message);
  assert.match(err.message, new RegExp(sha256));

  await assert.rejects(readModelBytes(join(work, "missing.onnx"), { sha256 }), (e: unknown) => e instanceof InferenceError && e.code === "model_unavailable");

  // Dropped as soon as read: the memory goes, and the hash, which took its own copy, still holds.
  const dropped = await readModelBytes(path, { sha256 });
  dropped.drop();
  assert.equal(dropped.bytes.byteLength, 0, "the buffer was detached");
  await dropped.verified;
});

test("a wasm session refuses a model file of the right size whose bytes differ", { skip: !haveModel, timeout: 300_000 }, async () => {
  const model = await resolveModel({ model: DEFAULT_MODEL, modelsDir });
  if (!model.ok) throw new Error(model.title);
  // One byte flipped deep in the weights: the graph may still load, only the hash can tell.
  const damaged = join(work, DEFAULT_MODEL_FILE);
  copyFileSync(model.path, damaged);
  const fd = openSync(damaged, "r+");
  const at = Math.floor(model.entry.bytes * 0.75);
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, at);
  one[0] = one[0]! ^ 0xff;
  writeSync(fd, one, 0, 1, at);
  closeSync(fd);

  const err = await createMaskSession({ model: model.entry, modelPath: damaged, backend: "wasm", threads: 1, wasmDir }).then(
    async (s) => {
      await s.dispose();
      return undefined;
    },
    (e: unknown) => e,
  );
  assert.ok(err instanceof InferenceError && err.code === "model_unavailable", `the damaged model gave ${String(err)}`);
  assert.ok(isModelMismatch(err), (err as Error).message);
});
