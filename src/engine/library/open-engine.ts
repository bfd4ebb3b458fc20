// The one way to build a removal engine, for the library, the CLI and the service: find
// (or assemble) the model and runtime, resolve the model, then either a pool of worker
// threads (each with its own session running the whole pipeline), for workers = 0 one
// session in the calling thread, or on a GPU one session in a thread of its own shared by
// pipeline workers (gpu-engine.ts). `auto` on a hardware GPU starts on WebAssembly and hands
// over to the GPU once it is warm (gpu-handover.ts).
import { join } from "node:path";
import { locateAssets } from "../assets/locate.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../assets/paths.ts";
import { readGraphIo } from "../assets/onnx-io.ts";
import { resolveCardedModel, type CardedModel } from "../inference/card-source.ts";
import { InferenceError, messageOf } from "../inference/errors.ts";
import { bindCard } from "../inference/graph-contract.ts";
import { loadManifest } from "../inference/manifest.ts";
import { gpuFormName, modelForBackend } from "../inference/gpu-form.ts";
import { diagnoseGpu, requestAdapterFacts, summarizeDiagnosis, type GpuAdapterFacts, type GpuDiagnosisSummary } from "../inference/gpu-doctor.ts";
import { hasWebGpu, WEBGPU_WASM_THREADS } from "../inference/backend-ort-web.ts";
import type { BoundModel, ModelCard } from "../inference/model-card.ts";
import { isModelMismatch } from "../inference/model-bytes.ts";
import { createMaskSession, type BackendChoice } from "../inference/session.ts";
import { createEngine, type Engine } from "../pipeline/engine.ts";
import { createGpuEngine, gpuPipelineShape } from "../pipeline/gpu-engine.ts";
import { createInlineEngine } from "../pipeline/inline-engine.ts";
import { handingOverToGpu } from "./gpu-handover.ts";

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
  /** On a GPU: pipeline workers sharing its session (default gpuPipelineShape's). */
  gpuWorkers?: number;
}

/**
 * Resolves once the engine is built. Pool workers start their sessions in the background
 * (the service answers 503 meanwhile): `engine.whenReady()` says when they are done.
 * A model file of the right size is not hashed here: each session hashes the bytes it
 * loads, while it starts (src/engine/inference/model-bytes.ts). `modelCheck: "sha256"` hashes
 * it here first and rebuilds it when damaged (openReadyEngine's second try).
 */
export async function openEngine(s: EngineSettings, modelCheck: "sha256" | "size" = "size"): Promise<Engine> {
  // Under auto the host's GPU is looked at once: the adapter chooses the model, and what was
  // found (or why a GPU present goes unused) is in the engine's state, /readyz and the log.
  if (s.backend !== "auto" || s.workers === 0) return openModel(s, modelCheck, false);
  let summary: GpuDiagnosisSummary | undefined;
  let engine: Engine;
  if (await hasGpuForm(s)) {
    // The model asked for serves on WebAssembly whatever the GPU, from the start; the
    // adapter is asked for only when the GPU's start may begin (gpu-handover.ts): a
    // process's first request held the main thread 0.5 s on an H100 host.
    engine = handingOverToGpu({
      cpu: await openModel({ ...s, backend: "wasm" }, modelCheck, false),
      startGpu: async () => {
        const host = await lookAtGpu();
        summary = host.summary;
        const gpuForm = await chooseModel(s, host.adapter);
        return gpuForm === s.model ? undefined : openModel({ ...s, model: gpuForm }, modelCheck, true);
      },
      reopenCpu: () => openModel({ ...s, backend: "wasm" }, modelCheck, false),
    });
  } else {
    summary = (await lookAtGpu()).summary;
    engine = await openModel(s, modelCheck, false);
  }
  const state = engine.state.bind(engine);
  engine.state = () => ({ ...state(), ...(summary ? { gpu: summary } : {}) });
  return engine;
}

/** The adapter (where the runtime has WebGPU) and the diagnosis of this host's GPU (gpu-doctor.ts). */
async function lookAtGpu(): Promise<{ adapter: GpuAdapterFacts | null; summary: GpuDiagnosisSummary }> {
  const asked = hasWebGpu() ? await requestAdapterFacts() : { adapter: null };
  return { adapter: asked.adapter, summary: summarizeDiagnosis(await diagnoseGpu({ adapter: asked.adapter })) };
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
  // On a GPU one session per process, in a thread of its own, shared by pipeline workers
  // (gpu-engine.ts); workers = 0 keeps it in the calling thread. auto's GPU form always runs there.
  const onGpu = session.backend === "webgpu";
  const engine =
    s.workers === 0
      ? createInlineEngine(await createMaskSession(session))
      : onGpu
        ? createGpuEngine({ session: { ...session, threads: WEBGPU_WASM_THREADS }, ...gpuPipelineShape(undefined, s.gpuWorkers), collectCallingThread: s.collectCallingThread })
        : createEngine({ poolSize: s.workers, session, collectCallingThread: s.collectCallingThread });
  // Which model runs (the GPU form, when auto chose it) is part of the engine's state and of
  // each result (X-PD-Model names the model that made that cut-out, also while auto hands over).
  const state = engine.state.bind(engine);
  const run = engine.run.bind(engine);
  engine.state = () => ({ ...state(), model: model.name, ...(gpuForm ? { gpuForm } : {}) });
  engine.run = async (job, signal) => {
    const result = await run(job, signal);
    return result.ok ? { ...result, model: model.name } : result;
  };
  return engine;
}

/**
 * `auto` on a hardware GPU runs a packaged model's GPU form instead (src/engine/inference/gpu-form.ts),
 * in worker threads: with workers = 0 (the CLI's one-file call) the model asked for runs on the
 * CPU, whose first cut-out comes before a GPU session would be warm.
 */
async function chooseModel(s: EngineSettings, adapter: GpuAdapterFacts | null): Promise<string> {
  // Without a hardware adapter (Node, a software one) there is no GPU form to choose: the manifest is not read for it.
  if (s.backend !== "auto" || s.modelsDir || s.workers === 0 || !adapter || adapter.software) return s.model;
  const loaded = await loadManifest(join(PACKAGE_MODELS_DIR, "manifest.json"));
  return loaded.ok ? modelForBackend(loaded.manifest, s.model, s.backend, async () => adapter) : s.model;
}

/** Whether the package's manifest has a GPU form of the model asked for (auto may then run it on a GPU). */
async function hasGpuForm(s: EngineSettings): Promise<boolean> {
  // Without WebGPU (Node) no GPU form can run: the manifest is not read for it.
  if (s.modelsDir || !hasWebGpu()) return false;
  const loaded = await loadManifest(join(PACKAGE_MODELS_DIR, "manifest.json"));
  return loaded.ok && gpuFormName(loaded.manifest, s.model) !== undefined;
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
