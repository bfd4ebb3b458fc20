// The native backend: onnxruntime-node, an optional dependency (prebuilt binaries for
// Linux, macOS and Windows). It is loaded only when asked for, so installs without it
// (npm --omit=optional, or platforms without a binary) still run on WebAssembly.
import type * as OrtCommon from "onnxruntime-common";
import { InferenceError, messageOf } from "./errors.ts";
import { readModelBytes } from "./model-bytes.ts";
import { checkGraphNames, inputDims, type RunnerOptions, type TensorRunner } from "./runner.ts";

// onnxruntime-node re-exports onnxruntime-common's API; typing it through common keeps
// the type-check working when the optional package is absent.
export type NativeOrt = Pick<typeof OrtCommon, "InferenceSession" | "Tensor">;

export async function importNativeOrt(): Promise<NativeOrt> {
  const specifier = "onnxruntime-node"; // a variable, so tsc does not require the package
  try {
    const mod = (await import(specifier)) as NativeOrt & { default?: NativeOrt };
    return mod.InferenceSession ? mod : (mod.default as NativeOrt);
  } catch (err) {
    throw new InferenceError(
      "model_unavailable",
      `backend native needs the optional package onnxruntime-node, which did not load (${messageOf(err)}); install it or use INFERENCE_BACKEND=wasm`,
      { cause: err },
    );
  }
}

/** Session options (exported so the benchmark measures the same thing). */
export const nativeSessionOptions = (threads: number): OrtCommon.InferenceSession.SessionOptions => ({
  intraOpNumThreads: threads,
  // One graph branch at a time: the parallelism we want is inside each operator.
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
  // ORT's pool threads busy-wait between and after operators by default. With as many
  // threads as cores, any other runnable thread (the pipeline's own stages, another
  // pool worker, the HTTP loop, GC, another process) finds no free core, and ORT's
  // evenly split operators then wait for the descheduled thread: one busy core made a
  // run 2.27 s spinning against 2.09 s blocking, at the same 1.27 s when quiet, and
  // blocking used 8-22 % less CPU (docs/DECISIONS.md, "Native threads block").
  extra: { session: { intra_op: { allow_spinning: "0" } } },
});

export async function createNativeRunner(opts: RunnerOptions): Promise<TensorRunner> {
  const ort = await importNativeOrt();
  // Read once and hashed while the session starts from the same bytes (model-bytes.ts).
  const model = await readModelBytes(opts.modelPath, opts.model);
  let session: OrtCommon.InferenceSession;
  try {
    session = await ort.InferenceSession.create(model.bytes, nativeSessionOptions(opts.threads));
  } catch (err) {
    throw new InferenceError("model_unavailable", `cannot start a native session: ${messageOf(err)}`, { cause: err });
  }
  model.drop(); // the session holds its own copy of the model
  try {
    await model.verified;
  } catch (err) {
    await session.release();
    throw err;
  }
  const problem = checkGraphNames(opts.model, session.inputNames, session.outputNames);
  if (problem) {
    await session.release();
    throw new InferenceError("model_unavailable", problem);
  }

  return {
    backend: "native",
    async run(input, height, width) {
      const feeds = { [opts.model.inputName]: new ort.Tensor("float32", input, inputDims(opts.model, height, width)) };
      const out = await session.run(feeds, [opts.model.outputName]);
      const tensor = out[opts.model.outputName];
      if (!tensor) throw new InferenceError("inference_failed", `model returned no "${opts.model.outputName}"`);
      return tensor.data as ArrayLike<number>;
    },
    dispose: () => session.release(),
  };
}
