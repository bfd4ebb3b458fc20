// One process of bench/cold-parts.ts: does the phases up to argv[2], then exits.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const [phase, threadsArg, photoArg] = process.argv.slice(2) as [string, string, string | undefined];
const threads = Number(threadsArg);
const REPO = fileURLToPath(new URL("../", import.meta.url));
const ORDER = ["import", "runtime", "session", "first run", "second run"];
const upTo = (p: string) => phase !== "remover" && ORDER.indexOf(p) <= ORDER.indexOf(phase);
const photoPath = photoArg ?? join(REPO, "test/fixtures/photos/rocket.jpg");

const lib = (await import(join(REPO, "dist/index.js"))) as typeof import("../src/index.ts");
if (phase === "remover") {
  await using remover = await lib.createRemover({ threads });
  await remover.remove(new Uint8Array(readFileSync(photoPath)));
} else if (upTo("runtime")) {
  const { importOrtWeb, configureOrtWeb, ortWebSessionOptions } = await import("../src/engine/inference/backend-ort-web.ts");
  const { tinyIsNetModel } = await import("../test/support/tiny-onnx.ts");
  const ort = await importOrtWeb("default");
  configureOrtWeb(ort, join(REPO, "wasm"), threads);
  const tiny = await ort.InferenceSession.create(tinyIsNetModel(8, 8).bytes, ortWebSessionOptions("wasm"));
  await tiny.release();
  if (upTo("session")) {
    const { loadManifest } = await import("../src/engine/inference/manifest.ts");
    const { readModelBytes } = await import("../src/engine/inference/model-bytes.ts");
    const { DEFAULT_MODEL } = await import("../src/engine/inference/default-model.ts");
    const { modelInputSize } = await import("../src/engine/inference/input-side.ts");
    const { decodeImage } = await import("../src/engine/imaging/decode.ts");
    const m = await loadManifest(join(REPO, "models/manifest.json"));
    if (!m.ok) throw new Error(m.title);
    const entry = m.manifest.models[DEFAULT_MODEL]!;
    const bytes = await readModelBytes(join(REPO, "models", entry.file), entry);
    const session = await ort.InferenceSession.create(bytes.bytes, ortWebSessionOptions("wasm"));
    await bytes.verified;
    const decoded = await decodeImage(new Uint8Array(readFileSync(photoPath)));
    if (!decoded.ok) throw new Error(decoded.title);
    const [h, w] = entry.inputSize;
    const fed = modelInputSize({ inputSize: { width: w, height: h }, sizes: entry.sizes });
    const input = new ort.Tensor("float32", new Float32Array(3 * fed.width * fed.height).fill(0.1), [1, 3, fed.height, fed.width]);
    for (const p of ["first run", "second run"]) if (upTo(p)) await session.run({ [entry.inputName]: input }, [entry.outputName]);
    await session.release();
  }
}
