// The one way to build a removal engine, for the library, the CLI and the service: find
// (or assemble) the model and runtime, resolve the model, then either a pool of worker
// threads (each with its own session running the whole pipeline) or, for workers
// = 0, one session in the calling thread.
import { join } from "node:path";
import { locateAssets } from "../assets/locate.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../assets/paths.ts";
import { readGraphIo } from "../assets/onnx-io.ts";
import { resolveCardedModel, type CardedModel } from "../inference/card-source.ts";
import { InferenceError, messageOf } from "../inference/errors.ts";
import { bindCard } from "../inference/graph-contract.ts";
import { loadManifest } from "../inference/manifest.ts";
import { modelForBackend } from "../inference/gpu-form.ts";
import { hasWebGpu } from "../inference/backend-ort-web.ts";
import type { BoundModel, ModelCard } from "../inference/model-card.ts";
import { isModelMismatch } from "../inference/model-bytes.ts";
import { createMaskSession, type BackendChoice } from "../inference/session.ts";
import { createEngine, type Engine } from "../pipeline/engine.ts";
import { createInlineEngine } from "../pipeline/inline-engine.ts";
import { startingOrFallingBack, withGpuFallback } from "./gpu-fallback.ts";

/** The model an engine runs when none is named (the service applies it to an unset MODEL). */
export { DEFAULT_MODEL } from "../inference/default-model.ts";

export interface EngineSettings {
  /** A manifest name or a path to an .onnx file (with a card, or a manifest entry). */
  model: string;
  /** How to feed a model file: a preset name, a card file's path, or a card (src/engine/inference/card-source.ts). */
  card?: string | ModelCard;
  /** A folder of ready model files (the service's MODELS_DIR); default: the package's, assembled on first use. */
  modelsDir?: string;
  /** "stub" is the service's test double, not offered by the library. */
  backend: BackendChoice;
  threads: number;
  workers: number;
  stubDelayMs?: number;
  /** The service's: see EngineOptions.collectCallingThread (src/engine/pipeline/engine.ts). */
  collectCallingThread?: boolean;
  /** The service's: see EngineOptions.warmUpOnGpu. */
  warmUpOnGpu?: boolean;
}

/**
 * Resolves once the engine is built. Pool workers start their sessions in the background
 * (the service answers 503 meanwhile): `engine.whenReady()` says when they are done.
 * A model file of the right size is not hashed here: each session hashes the bytes it
 * loads, while it starts (src/engine/inference/model-bytes.ts). `modelCheck: "sha256"` hashes
 * it here first and rebuilds it when damaged (openReadyEngine's second try).
 */
export async function openEngine(s: EngineSettings, modelCheck: "sha256" | "size" = "size"): Promise<Engine> {
  const gpuForm = await chooseModel(s);
  if (gpuForm === s.model) return openModel(s, modelCheck, false);
  // auto's GPU form runs on the GPU or not at all: on WebAssembly it is slower than the
  // model it stands for (float against int8 kernels). If it does not start there, whether
  // while opening or while its worker starts, the engine is the model asked for on the CPU.
  const onCpu = () => openModel({ ...s, backend: "wasm" }, modelCheck, false);
  let gpu: Engine;
  try {
    gpu = await openModel({ ...s, model: gpuForm }, modelCheck, true);
  } catch (err) {
    return withGpuFallback(await onCpu(), messageOf(err));
  }
  return startingOrFallingBack(gpu, onCpu);
}

async function openModel(s: EngineSettings, modelCheck: "sha256" | "size", gpuForm: boolean): Promise<Engine> {
  // The stub reads no model or runtime file: nothing to check or build for it.
  const dirs =
    s.backend === "stub" ? { modelsDir: s.modelsDir ?? PACKAGE_MODELS_DIR, wasmDir: PACKAGE_WASM_DIR } : await locateAssets({ ...s, modelCheck });
  const model = await resolveCardedModel({ model: s.model, card: s.card, modelsDir: dirs.modelsDir });
  if (!model.ok) throw new InferenceError(model.code, model.title);
  const session = {
    model: s.backend === "stub" ? stubModel(model.card) : await boundToGraph(model),
    modelPath: model.path,
    backend: gpuForm ? ("webgpu" as const) : s.backend,
    threads: s.threads,
    wasmDir: dirs.wasmDir,
    stubDelayMs: s.stubDelayMs,
  };
  // One WebGPU session per process (one GPU): sessions of their own would each hold the
  // model's weights on the GPU and take turns on it anyway; the pool's queue in front of
  // the one worker orders the jobs. auto's GPU form always runs there.
  const onGpu = session.backend === "webgpu";
  const workers = onGpu ? Math.min(s.workers, 1) : s.workers;
  const engine =
    workers === 0
      ? createInlineEngine(await createMaskSession(session))
      : createEngine({ poolSize: workers, session, collectCallingThread: s.collectCallingThread, warmUpOnGpu: s.warmUpOnGpu });
  // Which model runs (the GPU form, when auto chose it) is part of the engine's state.
  const state = engine.state.bind(engine);
  engine.state = () => ({ ...state(), model: model.name, ...(gpuForm ? { gpuForm } : {}) });
  return engine;
}

/** `auto` on a hardware GPU runs a packaged model's GPU form instead (src/engine/inference/gpu-form.ts). */
async function chooseModel(s: EngineSettings): Promise<string> {
  // Without WebGPU (Node) there is no GPU form to choose: the manifest is not read for it.
  if (s.backend !== "auto" || s.modelsDir || !hasWebGpu()) return s.model;
  const loaded = await loadManifest(join(PACKAGE_MODELS_DIR, "manifest.json"));
  return loaded.ok ? modelForBackend(loaded.manifest, s.model, s.backend) : s.model;
}

/**
 * The card held against the graph's inputs and outputs, read from the file: a model that
 * does not fit its card fails here, at start, with every difference named.
 */
async function boundToGraph(model: CardedModel): Promise<BoundModel> {
  let io;
  try {
    io = await readGraphIo(model.path);
  } catch (err) {
    throw new InferenceError("model_unavailable", `model file ${model.path} is not an ONNX graph that can be read: ${messageOf(err)}`, { cause: err });
  }
  const bound = bindCard(model.card, io);
  if (!bound.ok) throw new InferenceError("model_unavailable", `model file ${model.path} does not match its card (${model.cardSource}): ${bound.problems.join("; ")}`);
  return bound.model;
}

/** The stub reads no file: the card's names, or the ones our own models use. */
const stubModel = (card: ModelCard): BoundModel => ({ ...card, inputName: card.inputName ?? "input", outputName: card.outputName ?? "output" });

/**
 * openEngine, then waits until every session has started. A session that finds its model
 * file damaged (same size, other bytes) fails its start; the file is then checked and
 * rebuilt from the installed data package, and the engine opened once more.
 */
export async function openReadyEngine(s: EngineSettings): Promise<Engine> {
  try {
    return await ready(await openEngine(s));
  } catch (err) {
    if (!isModelMismatch(err) || s.modelsDir) throw err;
  }
  return ready(await openEngine(s, "sha256"));
}

async function ready(engine: Engine): Promise<Engine> {
  try {
    await engine.whenReady();
  } catch (err) {
    await engine.dispose().catch(() => {});
    throw err;
  }
  return engine;
}
