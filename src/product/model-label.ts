// X-PD-Model: "name/version" of the model that made a cut-out (e.g. isnet-int8-static/1.4.5),
// so a customer can tell results apart after a model change. The name is the model
// file's, the version the data package's it was assembled from; a model supplied by
// the operator (no source package) is named by the start of its sha256 instead.
import { basename, join } from "node:path";
import { loadManifest, type ModelEntry } from "../engine/inference/manifest.ts";

export function modelLabel(entry: ModelEntry): string {
  return `${entry.file.replace(/\.onnx$/i, "")}/${entry.source?.version ?? entry.sha256.slice(0, 12)}`;
}

/** The label for the MODEL setting (a manifest name or a path to a listed .onnx); undefined if it is not listed. */
export async function modelLabelFor(model: string, modelsDir: string): Promise<string | undefined> {
  const loaded = await loadManifest(join(modelsDir, "manifest.json"));
  if (!loaded.ok) return undefined;
  const models = loaded.manifest.models;
  const spec = model.trim();
  const entry = Object.hasOwn(models, spec) ? models[spec] : Object.values(models).find((e) => e.file === basename(spec));
  return entry ? modelLabel(entry) : undefined;
}
