// What a backend provides: a float tensor in, the mask output's values out. The session
// (session.ts) adds pre/post-processing on top, so backends stay thin.
import type { ModelEntry } from "./manifest.ts";

export type TensorBackend = "wasm" | "webgpu" | "native";

export interface TensorRunner {
  backend: TensorBackend;
  /** input: [1, 3, height, width] float32 per the manifest; returns the output named in the manifest. */
  run(input: Float32Array, height: number, width: number): Promise<ArrayLike<number>>;
  dispose(): Promise<void>;
}

export interface RunnerOptions {
  model: ModelEntry;
  modelPath: string;
  threads: number;
  wasmDir: string;
}

/** The graph must have the manifest's input and output, or every run would fail later. */
export function checkGraphNames(model: ModelEntry, inputNames: readonly string[], outputNames: readonly string[]): string | undefined {
  if (!inputNames.includes(model.inputName)) return `model has no input "${model.inputName}" (inputs: ${inputNames.join(", ")})`;
  if (!outputNames.includes(model.outputName)) return `model has no output "${model.outputName}" (outputs: ${outputNames.join(", ")})`;
  return undefined;
}
