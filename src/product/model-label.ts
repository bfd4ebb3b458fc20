// X-PD-Model: "name/version" of the model that made a cut-out (e.g. isnet-int8-static/1.4.5),
// so a customer can tell results apart after a model change. The name is the model
// file's, the version the data package's it was assembled from; a model supplied by
// the operator (no source package) is named by the start of its sha256 instead, and one
// described by a card by its preset (or "card").
import { basename, join } from "node:path";
import { isPresetName } from "../engine/inference/card-presets.ts";
import { loadManifest, type ModelEntry } from "../engine/inference/manifest.ts";

export function modelLabel(entry: ModelEntry): string {
  return `${entry.file.replace(/\.onnx$/i, "")}/${entry.source?.version ?? entry.sha256.slice(0, 12)}`;
}

/**
 * The label for the MODEL setting: a manifest name or a path to a listed .onnx by its entry;
 * a file described by a card (MODEL_CARD, or the card beside it) as "<file name>/<preset>",
 * or "<file name>/card" for a card of the operator's own.
 */
export async function modelLabelFor(model: string, modelsDir: string, card?: string): Promise<string | undefined> {
  const spec = model.trim();
  const loaded = await loadManifest(join(modelsDir, "manifest.json"));
  const models = loaded.ok ? loaded.manifest.models : {};
  const entry = Object.hasOwn(models, spec) ? models[spec] : Object.values(models).find((e) => e.file === basename(spec));
  if (entry && card === undefined) return modelLabel(entry);
  if (!/\.onnx$/i.test(spec)) return undefined;
  return `${basename(spec).replace(/\.onnx$/i, "")}/${card !== undefined && isPresetName(card.trim()) ? card.trim() : "card"}`;
}

/** The labels of `model`'s GPU forms (auto runs one in its place on a GPU host), by manifest name. */
export async function gpuFormLabels(model: string, modelsDir: string): Promise<Map<string, string>> {
  const loaded = await loadManifest(join(modelsDir, "manifest.json"));
  const forms = new Map<string, string>();
  if (!loaded.ok) return forms;
  for (const [name, entry] of Object.entries(loaded.manifest.models)) if (entry.gpuFormOf === model.trim()) forms.set(name, modelLabel(entry));
  return forms;
}
