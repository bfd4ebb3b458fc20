// Bare inference: the model in a plain ORT session on a given 1024² tensor (a fixed
// synthetic one unless the caller passes the tensor of a real image), nothing else (no
// decode, resize, pre/post-processing or worker). With the same session options as the
// pipeline's sessions (exported by the backends), so the two differ only in what
// surrounds the run. Used by bench/inference-bare.ts and, interleaved with the
// pipeline's requests, by bench/pipeline-child.ts.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { resolveModel } from "../src/engine/inference/manifest.ts";
import { rgbToNchw } from "../src/engine/inference/tensor.ts";
import type { ModelEntry } from "../src/engine/inference/manifest.ts";

export interface BareSession {
  model: ModelEntry;
  /** The deterministic input's RGB bytes (for timing pre-processing). */
  rgb: Uint8Array;
  /** The model's input tensor for RGB bytes at its input size, normalised as the pipeline's session does. */
  tensorOf(rgb: Uint8Array): Float32Array;
  /**
   * One run on `input`, a tensorOf result (default: the deterministic input's): the model's
   * time depends on the picture it sees. `fetchAll` fetches every output instead of the mask alone.
   */
  run(fetchAll: boolean, input?: Float32Array): Promise<ArrayLike<number>>;
}

const root = fileURLToPath(new URL("../", import.meta.url));

export async function openBareSession(cfg: { model: string; backend: "wasm" | "native"; threads: number }): Promise<BareSession> {
  const resolved = await resolveModel({ model: cfg.model, modelsDir: `${root}models` });
  if (!resolved.ok) throw new Error(resolved.title);
  const m = resolved.entry;
  const [h, w] = m.inputSize;
  // A deterministic textured image: flat inputs can take faster paths in some kernels.
  const rgb = new Uint8Array(w * h * 3);
  for (let i = 0; i < rgb.length; i++) rgb[i] = (i * 2654435761) >>> 24;
  const tensorOf = (bytes: Uint8Array) => rgbToNchw(bytes, w, h, m.mean, m.std);
  const deterministic = tensorOf(rgb);
  const dims = [1, 3, h, w];

  if (cfg.backend === "wasm") {
    const { importOrtWeb, configureOrtWeb, ortWebSessionOptions } = await import("../src/engine/inference/backend-ort-web.ts");
    const ort = await importOrtWeb("default");
    configureOrtWeb(ort, `${root}wasm`, cfg.threads);
    const session = await ort.InferenceSession.create(new Uint8Array(await readFile(resolved.path)), ortWebSessionOptions("wasm"));
    const feeds = (input: Float32Array) => ({ [m.inputName]: new ort.Tensor("float32", input, dims) });
    return bare((all, input) => (all ? session.run(feeds(input)) : session.run(feeds(input), [m.outputName])));
  }
  const { importNativeOrt, nativeSessionOptions } = await import("../src/engine/inference/backend-native.ts");
  const ort = await importNativeOrt();
  const session = await ort.InferenceSession.create(resolved.path, nativeSessionOptions(cfg.threads));
  const feeds = (input: Float32Array) => ({ [m.inputName]: new ort.Tensor("float32", input, dims) });
  return bare((all, input) => (all ? session.run(feeds(input)) : session.run(feeds(input), [m.outputName])));

  /** Either package's session run (their JS APIs are the same), with the mask output picked out. */
  function bare(run: (fetchAll: boolean, input: Float32Array) => Promise<Record<string, { data: unknown }>>): BareSession {
    return {
      model: m,
      rgb,
      tensorOf,
      run: async (fetchAll, input = deterministic) => (await run(fetchAll, input))[m.outputName]!.data as Float32Array,
    };
  }
}
