// Which card describes the model, on every face (the library's `card` option, the CLI's
// --card, the service's MODEL_CARD): a card given with the model comes first (a preset
// name, a card file, or for the library an object); then a card file beside the model,
// <name>.card.json for <name>.onnx; then the manifests (manifest.ts), as before cards
// existed. A model file none of them describes is refused, naming the ways to describe it.
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { cardFromDocument, isPresetName, presetCard, PRESET_NAMES } from "./card-presets.ts";
import { inferenceFailure, messageOf, type InferenceFailure } from "./errors.ts";
import { NO_ENTRY, resolveModel } from "./manifest.ts";
import type { ModelCard } from "./model-card.ts";

/** The file name a card beside `<name>.onnx` has. */
export const besideCardPath = (modelPath: string): string => join(dirname(modelPath), `${basename(modelPath).replace(/\.onnx$/i, "")}.card.json`);

export interface CardedModel {
  ok: true;
  /** The manifest name, or the file's name without .onnx. */
  name: string;
  /** The card; a manifest entry's carries the file's sha256, which the session checks. */
  card: ModelCard & { sha256?: string };
  /** Where the card came from, for messages: `manifest entry "small"`, `preset birefnet`, a card file's path. */
  cardSource: string;
  /** Absolute path of the .onnx file. */
  path: string;
}

const isFile = (path: string) => stat(path).then((s) => s.isFile(), () => false);

const HOW_TO_DESCRIBE = `give it a card (a preset: ${PRESET_NAMES.join(", ")}; or a card file) as the library's card option, --card or MODEL_CARD, or put a <name>.card.json beside it`;

async function cardFile(path: string): Promise<{ ok: true; card: ModelCard } | InferenceFailure> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    return inferenceFailure("model_unavailable", `cannot read model card ${path}: ${messageOf(err)}`);
  }
  const parsed = cardFromDocument(doc, path);
  return parsed.ok ? parsed : inferenceFailure("model_unavailable", parsed.message);
}

/** A card given by name or file (a string), or already parsed (an object, checked by the library's options). */
async function givenCard(card: string | ModelCard): Promise<{ ok: true; card: ModelCard; source: string } | InferenceFailure> {
  if (typeof card !== "string") return { ok: true, card, source: "the card object given" };
  const spec = card.trim();
  if (isPresetName(spec)) return { ok: true, card: presetCard(spec), source: `preset ${spec}` };
  if (!spec.toLowerCase().endsWith(".json")) {
    return inferenceFailure("model_unavailable", `card "${spec}" is neither a preset (${PRESET_NAMES.join(", ")}) nor a .json card file`);
  }
  const path = resolve(spec);
  const read = await cardFile(path);
  return read.ok ? { ...read, source: path } : read;
}

export async function resolveCardedModel(opts: { model: string; card?: string | ModelCard; modelsDir: string }): Promise<CardedModel | InferenceFailure> {
  const spec = opts.model.trim();
  const isPath = spec.toLowerCase().endsWith(".onnx");
  if (opts.card !== undefined) {
    if (!isPath) return inferenceFailure("model_unavailable", `a card describes a model file: model "${spec}" is not a path to an .onnx file`);
    const path = resolve(spec);
    if (!(await isFile(path))) return inferenceFailure("model_unavailable", `model file ${path} does not exist`);
    const given = await givenCard(opts.card);
    if (!given.ok) return given;
    return { ok: true, name: basename(path).replace(/\.onnx$/i, ""), card: given.card, cardSource: given.source, path };
  }
  if (isPath) {
    const path = resolve(spec);
    const beside = besideCardPath(path);
    if ((await isFile(path)) && (await isFile(beside))) {
      const read = await cardFile(beside);
      if (!read.ok) return read;
      return { ok: true, name: basename(path).replace(/\.onnx$/i, ""), card: read.card, cardSource: beside, path };
    }
  }
  const listed = await resolveModel({ model: spec, modelsDir: opts.modelsDir });
  if (!listed.ok) return listed.title.includes(NO_ENTRY) ? inferenceFailure(listed.code, `${listed.title}; or ${HOW_TO_DESCRIBE}`) : listed;
  return { ok: true, name: listed.name, card: listed.entry, cardSource: `manifest entry "${listed.name}"`, path: listed.path };
}
