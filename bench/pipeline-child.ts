// One backend's half of npm run bench: builds the real product endpoint over a warm
// one-worker pool and times requests through it, each right after one bare inference
// (bench/bare-session.ts, in this process's main thread), so a change in the machine's
// load hits both alike and their ratio holds; then the library's remove() (the package
// entry, its own one-worker remover) on the same inputs. Prints one JSON line.
//
// The bare run is fed the tensor the pipeline gives the model for the same image: the
// model's time depends on the picture (the bench photo's tensor ran ~60 ms, about 2 %,
// slower than a synthetic texture in the same session, 9 of 10 paired runs), and the ratio
// is meant to show what surrounds the model, not that.
import { createAdmission } from "../src/product/admission.ts";
import { createProductApp, PRODUCT_PATH } from "../src/product/app.ts";
import { openEngine } from "../src/engine/library/open-engine.ts";
import { createByteBudget } from "../src/http/byte-budget.ts";
import { createRemover } from "../src/index.ts";
import { applyOrientation, decodeImage } from "../src/engine/imaging/index.ts";
import { modelInputInBands } from "../src/engine/imaging/cutout-bands.ts";
import { inlineBands } from "../src/engine/imaging/row-bands.ts";
import { benchInputs, type BenchInput } from "./inputs.ts";
import { openBareSession } from "./bare-session.ts";
import { median } from "./median.ts";

const cfg = JSON.parse(process.argv[2]) as { backend: "wasm" | "native"; threads: number; runs: number; model: string };
const bare = await openBareSession(cfg);
await bare.run(false); // warm-up
const engine = await openEngine({ model: cfg.model, backend: cfg.backend, threads: cfg.threads, workers: 1 });
await engine.whenReady();

const stages: Record<string, number>[] = [];
const app = createProductApp({
  engine,
  admission: createAdmission({ poolSize: 1, keyQueueMax: 100, queueMax: 100, now: Date.now }),
  receiveBudget: createByteBudget(1 << 30),
  now: Date.now,
  defaultDeadlineMs: 600_000,
  isShuttingDown: () => false,
  log: (e) => {
    if (e.msg === "removed") stages.push(e as Record<string, number>);
  },
});

/** What runPipeline hands the model for this image: decoded, upright, resized to the model's input. */
async function modelTensor(input: BenchInput): Promise<Float32Array> {
  const decoded = await decodeImage(input.bytes);
  if (!decoded.ok) throw new Error(decoded.title);
  const [height, width] = bare.model.inputSize;
  const upright = applyOrientation(decoded.image, decoded.header.orientation);
  return bare.tensorOf(await modelInputInBands(upright, width, height, inlineBands));
}

const rows = [];
const inputs = await benchInputs();
for (const input of inputs) {
  const tensor = await modelTensor(input);
  for (const tier of ["preview", "full"] as const) {
    const e2e: number[] = [];
    const bareMs: number[] = [];
    stages.length = 0;
    for (let i = 0; i <= cfg.runs; i++) {
      const b0 = performance.now();
      await bare.run(false, tensor);
      if (i > 0) bareMs.push(performance.now() - b0);
      const form = new FormData();
      form.append("image_file", new Blob([input.bytes as Uint8Array<ArrayBuffer>]), "in.jpg");
      form.append("size", tier);
      const t0 = performance.now();
      const res = await app.request(PRODUCT_PATH, { method: "POST", body: form });
      await res.arrayBuffer();
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      if (i > 0) e2e.push(ms); // the first run warms this input's code paths
    }
    const warm = stages.slice(1);
    const pick = (k: string) => median(warm.map((s) => s[k]));
    // Each request against the bare run right before it: the machine's speed drifts by more
    // than the overhead between runs, which a ratio of two medians would carry.
    const toBare = (ms: (k: number) => number) => median(bareMs.map((b, k) => ms(k) / b));
    rows.push({
      input: input.name,
      tier,
      outPixels: warm[0].width * warm[0].height,
      decodeMs: pick("decodeMs"),
      modelInputMs: pick("modelInputMs"),
      inferenceMs: pick("inferenceMs"),
      composeMs: pick("composeMs"),
      encodeMs: pick("encodeMs"),
      e2eMs: median(e2e),
      bareMs: median(bareMs),
      e2eToBare: toBare((k) => e2e[k]!),
      inferenceToBare: toBare((k) => warm[k]!.inferenceMs!),
    });
  }
}
await engine.dispose();

// The library's remove() on the same inputs, in the same process after the service's engine
// is gone, so the two never share the cores.
const remover = await createRemover({ model: cfg.model, backend: cfg.backend, threads: cfg.threads, workers: 1 });
for (const row of rows) {
  const input = inputs.find((i) => i.name === row.input)!;
  const times: number[] = [];
  for (let i = 0; i <= cfg.runs; i++) {
    const t0 = performance.now();
    await remover.remove(input.bytes, { size: row.tier });
    if (i > 0) times.push(performance.now() - t0);
  }
  Object.assign(row, { libraryMs: median(times) });
}
await remover.dispose();
console.log(JSON.stringify({ backend: engine.state().backend ?? cfg.backend, rows }));
process.exit(0);
