// The model the package ships and every face uses unless told otherwise, as the tests
// need to name it: its manifest name, its file in models/ and its X-PD-Model label.
import { readFileSync } from "node:fs";
import { DEFAULT_MODEL } from "../../src/engine/inference/default-model.ts";

const manifest = JSON.parse(readFileSync(new URL("../../models/manifest.json", import.meta.url), "utf8")) as {
  models: Record<string, { file: string; source?: { version: string } }>;
};
const entry = manifest.models[DEFAULT_MODEL]!;

export { DEFAULT_MODEL };
/** e.g. isnet-int8-static.onnx */
export const DEFAULT_MODEL_FILE = entry.file;
/** X-PD-Model of a cut-out made by the default model, e.g. isnet-int8-static/1.4.5 */
export const DEFAULT_MODEL_LABEL = `${entry.file.replace(/\.onnx$/, "")}/${entry.source!.version}`;
