// The library's face of the engine: createRemover / remove / dispose, and the one-shot
// removeBackground. Same engine, pipeline and worker pool as the service and the CLI.
import { InferenceError } from "../inference/errors.ts";
import type { Engine } from "../pipeline/engine.ts";
import type { PipelineOk } from "../pipeline/pipeline.ts";
import { ImageError } from "./errors.ts";
import { ownBytes, type ImageInput } from "./input.ts";
import { openReadyEngine } from "./open-engine.ts";
import { readRemoveOptions, readRemoverOptions, type RemoveOptions, type RemoverOptions } from "./options.ts";

/**
 * One cut-out: the PNG (RGBA, or greyscale with channels "alpha"), its size, the subject's
 * box (pixels with any opacity), `uncertainty` in [0, 1] (the API's X-PD-Uncertainty: how
 * unsure the model is about the outline; flag high ones for review) and `processingMs`, the
 * engine's own time on this image (not the wait for a worker), and `modelInput`, the size
 * the model was fed (the API's X-PD-Model-Input). The pipeline's own result, without its
 * stage timings.
 */
export type Cutout = Pick<PipelineOk, "png" | "width" | "height" | "foreground" | "uncertainty" | "processingMs" | "modelInput">;

export interface Remover {
  /** Rejects with ImageError for an image the API would refuse; the remover stays usable. */
  remove(input: ImageInput, options?: RemoveOptions): Promise<Cutout>;
  /**
   * Which backend runs the model now: "wasm", "webgpu" or "native". Under backend "auto" on a
   * GPU host it is "wasm" until the GPU is warm, then "webgpu" (whenSettled).
   */
  readonly backend: string;
  /** Which model runs now, by manifest name: under backend "auto" on a GPU, the GPU form of the one asked for once the GPU runs. */
  readonly model: string;
  /**
   * Resolves once the remover runs on its final backend: under backend "auto" on a GPU host,
   * when the GPU has taken the jobs over from WebAssembly (or gave way to it); at once elsewhere.
   * remove() never waits for it.
   */
  whenSettled(): Promise<void>;
  /** Ends the workers and sessions; later remove() calls reject. Safe to call twice. */
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

// Node 20 may lack the well-known symbol; `await using` then finds it under its registry name.
const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol.for("Symbol.asyncDispose") as typeof Symbol.asyncDispose);

/**
 * Builds the engine and waits until its sessions have started (about a second; the model
 * loads once). No inference runs before the first remove(), but on a GPU host with backend
 * "auto", where the GPU's session starts and warms up in the background (whenSettled).
 */
export async function createRemover(options?: RemoverOptions): Promise<Remover> {
  const choice = readRemoverOptions(options);
  return wrapEngine(await openReadyEngine(choice));
}

function wrapEngine(engine: Engine): Remover {
  let disposed = false;
  const dispose = async () => {
    if (disposed) return;
    disposed = true;
    await engine.dispose();
  };
  return {
    get backend() {
      return engine.state().backend ?? "unknown";
    },
    get model() {
      return engine.state().model ?? "unknown";
    },
    whenSettled: async () => {
      await engine.settled?.();
    },
    async remove(input, options) {
      const opts = readRemoveOptions(options);
      if (disposed) throw new InferenceError("shutting_down", "the remover is disposed");
      opts.signal?.throwIfAborted();
      const image = await ownBytes(input);
      const { signal, ...job } = opts;
      const result = await engine.run({ image, ...job }, signal);
      if (!result.ok) throw result.option ? new RangeError(result.title) : new ImageError(result.title);
      const { png, width, height, foreground, uncertainty, processingMs, modelInput } = result;
      return { png, width, height, foreground, uncertainty, processingMs, modelInput };
    },
    dispose,
    [asyncDispose]: dispose,
  };
}

/** createRemover, one remove, dispose: for a single image (each call loads the model). */
export async function removeBackground(input: ImageInput, options: RemoveOptions & RemoverOptions = {}): Promise<Cutout> {
  const { size, semitransparency, channels, bgColor, signal, inputSide, ...engineOptions } = options;
  const remover = await createRemover(engineOptions);
  try {
    return await remover.remove(input, { size, semitransparency, channels, bgColor, signal, inputSide });
  } finally {
    await remover.dispose();
  }
}
