// What a backend provides: a float tensor in, the mask output's values out. The session
// (session.ts) adds pre/post-processing on top, so backends stay thin.
import type { BoundModel } from "./model-card.ts";

export type TensorBackend = "wasm" | "webgpu" | "native";

export interface TensorRunner {
  backend: TensorBackend;
  /** On WebGPU: who ran the graph, as started (WebGpuRun). */
  webgpuRun?: WebGpuRun;
  /** input: float32 [1, 3, height, width] or, for an NHWC card, [1, height, width, 3] (inputDims); returns the output the card names. */
  run(input: Float32Array, height: number, width: number): Promise<ArrayLike<number>>;
  /**
   * RGB bytes (3 a pixel, row-major) in, the same output back: a runner that makes the
   * input tensor itself, from the card (WebGPU, on the GPU: webgpu-io.ts). The session
   * then skips making the float tensor on the CPU.
   */
  runRgb?(rgb: Uint8Array, height: number, width: number): Promise<ArrayLike<number>>;
  /** Several pictures of one size in one run, each one's output back (a graph that takes batches, fed on the GPU). */
  runRgbBatch?(pictures: readonly Uint8Array[], height: number, width: number): Promise<ArrayLike<number>[]>;
  dispose(): Promise<void>;
}

/**
 * How a WebGPU session is fed: "gpu-buffers" (the default) keeps its input and output on the
 * GPU (webgpu-io.ts); "tensors" hands ONNX Runtime CPU tensors, as WebAssembly is fed
 * (kept so bench/webgpu-profile.ts can time one against the other).
 */
export type WebGpuFeed = "gpu-buffers" | "tensors";

/**
 * Who runs a WebGPU session's graph: "planned" (the default) our own kernels in one compute
 * pass a run (planned/planned-runner.ts), for a graph every node of which they plan, else
 * onnxruntime-web's WebGPU provider; "provider" that provider always (the reference the
 * planned run is checked against, and the baseline its bench compares with).
 */
export type WebGpuRun = "planned" | "provider";

export interface RunnerOptions {
  model: BoundModel;
  modelPath: string;
  threads: number;
  wasmDir: string;
  webgpuFeed?: WebGpuFeed;
  webgpuRun?: WebGpuRun;
}

/** The graph must have the manifest's input and output, or every run would fail later. */
export function checkGraphNames(model: BoundModel, inputNames: readonly string[], outputNames: readonly string[]): string | undefined {
  if (!inputNames.includes(model.inputName)) return `model has no input "${model.inputName}" (inputs: ${inputNames.join(", ")})`;
  if (!outputNames.includes(model.outputName)) return `model has no output "${model.outputName}" (outputs: ${outputNames.join(", ")})`;
  return undefined;
}

/** The input tensor's dims for the card's layout at one input size, for `pictures` of them (a graph that takes batches). */
export function inputDims(model: Pick<BoundModel, "layout">, height: number, width: number, pictures = 1): number[] {
  return model.layout === "NHWC" ? [pictures, height, width, 3] : [pictures, 3, height, width];
}
