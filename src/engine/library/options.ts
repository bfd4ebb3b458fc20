// The library's options, checked once at the door: a wrong value is a RangeError or
// TypeError naming the option and what it accepts, before any work starts.
import { availableParallelism } from "node:os";
import { parseColour, type Colour } from "../imaging/background.ts";
import { cardFromDocument } from "../inference/card-presets.ts";
import { DEFAULT_MODEL } from "../inference/default-model.ts";
import type { ModelCard, ModelCardInput } from "../inference/model-card.ts";

export type { ModelCardInput };
import { CHANNELS, SIZES, type Channels, type Size } from "../../contract/params.ts";

export type PublicBackend = "auto" | "wasm" | "webgpu" | "native";
const BACKENDS: readonly PublicBackend[] = ["auto", "wasm", "webgpu", "native"];

export interface RemoverOptions {
  /** "int8-static" (default, the service's model: ours, statically quantised from medium's weights, medium's quality at below small's time), "small", "medium", "int8" (ours, dynamically quantised from medium), or a path to an .onnx file: described by `card`, by a <name>.card.json beside it, or by an entry in the package's models/manifest.json or a manifest.json beside the file. Only the default ships ready-made; the others are assembled from @imgly/background-removal-data on first use. */
  model?: "int8-static" | "small" | "medium" | "int8" | (string & {});
  /**
   * How to feed `model` when it is a file no manifest lists: a preset name ("isnet",
   * "isnet-general-use", "u2net", "u2netp", "birefnet", "birefnet-lite", "ben2", "modnet"),
   * the path of a card file (.json), or a card object (`{ preset: "birefnet", inputSize: [512, 512] }`,
   * or every field: docs/MODEL.md, "Model cards"). Absent: a `<name>.card.json` beside the
   * model, else its manifest entry.
   */
  card?: string | ModelCardInput;
  /** "auto" (default): WebGPU when a hardware adapter exists, else WebAssembly. "native" needs onnxruntime-node. */
  backend?: PublicBackend;
  /** Threads per model session (WebAssembly threads or native intra-op threads). Default: the core count. */
  threads?: number;
  /**
   * Worker threads, each with its own session (about 1.2 GB each for WebAssembly). Default 1:
   * inference runs off the calling thread, so its event loop stays free. 0: in the calling thread.
   */
  workers?: number;
}

export interface RemoveOptions {
  /** As the API's `size`: preview, small and regular give at most 0.25 MP; auto and full (default) the input size. */
  size?: Size;
  /** Soft edges (default true); false hardens the alpha to 0 or 255. */
  semitransparency?: boolean;
  /** As the API's `channels`: "rgba" (default), or "alpha" for the mask alone as a greyscale PNG. */
  channels?: Channels;
  /** As the API's `bg_color`: hex (`81d4fa`, `#81d4fa`, with optional alpha) or a CSS colour name; the cut-out is laid over it. */
  bgColor?: string;
  /** Aborting rejects with the signal's reason and withdraws the job if it has not started. */
  signal?: AbortSignal;
  /**
   * The model's input side, when not its own (1024 for the default model): another square
   * side the model takes (any multiple of 64 from 64 to 1024 for ours; smaller runs faster)
   * changes the mask; how much, per side, is in docs/MODEL.md ("The input size"). RangeError
   * if the model does not take it.
   */
  inputSide?: number;
}

export interface EngineChoice {
  model: string;
  card?: string | ModelCard;
  backend: PublicBackend;
  threads: number;
  workers: number;
}

function count(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

export function readRemoverOptions(o: RemoverOptions = {}): EngineChoice {
  if (typeof o !== "object" || o === null) throw new TypeError("createRemover options must be an object");
  const model = o.model ?? DEFAULT_MODEL;
  if (typeof model !== "string" || model.trim() === "") throw new TypeError("model must be int8-static, small, medium, int8 or a path to an .onnx file");
  const backend = o.backend ?? "auto";
  if (!BACKENDS.includes(backend)) throw new RangeError(`backend must be one of ${BACKENDS.join(", ")}, got ${String(backend)}`);
  return {
    model: model.trim(),
    ...(o.card === undefined ? {} : { card: readCard(o.card) }),
    backend,
    threads: o.threads === undefined ? Math.max(1, availableParallelism()) : count("threads", o.threads, 1, 64),
    workers: o.workers === undefined ? 1 : count("workers", o.workers, 0, 64),
  };
}

/** A card object is checked here, at the door; a name or file is read when the engine opens. */
function readCard(card: unknown): string | ModelCard {
  if (typeof card === "string") {
    if (card.trim() === "") throw new TypeError("card must be a preset name, a path to a .json card file, or a card object");
    return card.trim();
  }
  if (typeof card !== "object" || card === null) throw new TypeError("card must be a preset name, a path to a .json card file, or a card object");
  const parsed = cardFromDocument(card, "(the card option)");
  if (!parsed.ok) throw new TypeError(parsed.message);
  return parsed.card;
}

export interface RemoveChoice {
  size: Size | undefined;
  semitransparency: boolean;
  channels: Channels;
  background: Colour | undefined;
  signal?: AbortSignal;
  inputSide?: number;
}

export function readRemoveOptions(o: RemoveOptions = {}): RemoveChoice {
  if (typeof o !== "object" || o === null) throw new TypeError("remove options must be an object");
  // The API's own wording for a wrong size.
  if (o.size !== undefined && !(SIZES as readonly string[]).includes(o.size)) throw new RangeError(`size must be one of ${SIZES.join(", ")}`);
  if (o.semitransparency !== undefined && typeof o.semitransparency !== "boolean") throw new TypeError("semitransparency must be true or false");
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw new TypeError("signal must be an AbortSignal");
  if (o.channels !== undefined && !(CHANNELS as readonly string[]).includes(o.channels)) throw new RangeError(`channels must be one of ${CHANNELS.join(", ")}`);
  const background = o.bgColor === undefined ? undefined : typeof o.bgColor === "string" ? parseColour(o.bgColor) : undefined;
  if (o.bgColor !== undefined && !background) throw new RangeError("bgColor must be a hex colour (81d4fa, #81d4fa, 81d4fa77) or a CSS colour name");
  if (o.inputSide !== undefined && (typeof o.inputSide !== "number" || !Number.isInteger(o.inputSide) || o.inputSide < 1)) {
    throw new RangeError(`inputSide must be a positive integer (a side the model takes), got ${String(o.inputSide)}`);
  }
  return {
    size: o.size,
    semitransparency: o.semitransparency ?? true,
    channels: o.channels ?? "rgba",
    background,
    signal: o.signal,
    ...(o.inputSide !== undefined ? { inputSide: o.inputSide } : {}),
  };
}
