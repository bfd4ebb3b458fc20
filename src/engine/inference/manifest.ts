// The model manifest (models/manifest.json): what each model file is, where it came
// from, and how to feed it (each entry is a model card, model-card.ts, with the file's
// facts added). MODEL=small|medium picks an entry by name; MODEL=<path.onnx> matches an
// entry by file name or sha256, in models/manifest.json or in a manifest.json beside the
// file. A file no manifest lists is described by a card instead (card-source.ts).
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { sha256OfFile } from "./file-hash.ts";
import { inferenceFailure, messageOf, type InferenceFailure } from "./errors.ts";
import { CARD_SHAPE, checkCardFields } from "./model-card.ts";

const positiveInt = z.number().int().positive();

/**
 * A manifest entry is a model card (model-card.ts) plus what the package knows of the file:
 * its name, hash, size and origin. It names the input and output outright (it describes one
 * known file); other fields (the assembly's `derive`) are read by src/engine/assets/.
 */
export const ModelEntrySchema = z
  .object({
    ...CARD_SHAPE,
    file: z.string().regex(/^[^/\\]+\.onnx$/, "a bare file name ending in .onnx"),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "64 lower-case hex digits"),
    bytes: positiveInt,
    /** Where assemble-models.mjs builds the file from; absent for operator-supplied models. */
    source: z.object({ package: z.string().min(1), version: z.string().min(1), resource: z.string().startsWith("/") }).optional(),
    precision: z.string().min(1),
    /**
     * This entry is the GPU form of the named one (its weights, no CPU-only operator), made
     * from that file at assemble time: backend "auto" on a hardware GPU runs it instead.
     */
    gpuFormOf: z.string().optional(),
    /**
     * A GPU form's activations: float32 (absent), or float16 for adapters that offer
     * `shader-f16` (src/engine/inference/gpu-form.ts picks it there).
     */
    gpuActivations: z.enum(["float32", "float16"]).optional(),
    inputName: z.string().min(1),
    /** The mask output; a graph may have more outputs (IS-Net has 12), only this one is read. */
    outputName: z.string().min(1),
  })
  .superRefine(checkCardFields);

export const ModelManifestSchema = z.object({
  version: z.literal(1),
  models: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/), ModelEntrySchema),
});

/** In the message for a model file no manifest lists (card-source.ts adds the other ways to describe it). */
export const NO_ENTRY = "has no manifest entry";

export type ModelEntry = z.output<typeof ModelEntrySchema>;
export type ModelManifest = z.output<typeof ModelManifestSchema>;

export interface ResolvedModel {
  ok: true;
  /** The manifest key of the entry. */
  name: string;
  entry: ModelEntry;
  /** Absolute path of the .onnx file. */
  path: string;
}

export function parseManifest(json: unknown): { ok: true; manifest: ModelManifest } | InferenceFailure {
  const parsed = ModelManifestSchema.safeParse(json);
  if (!parsed.success) return inferenceFailure("model_unavailable", `invalid model manifest:\n${z.prettifyError(parsed.error)}`);
  return { ok: true, manifest: parsed.data };
}

export async function loadManifest(path: string): Promise<{ ok: true; manifest: ModelManifest } | InferenceFailure> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    return inferenceFailure("model_unavailable", `cannot read model manifest ${path}: ${messageOf(err)}`);
  }
  return parseManifest(json);
}


async function fileSize(path: string): Promise<number | undefined> {
  try {
    const s = await stat(path);
    return s.isFile() ? s.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Turns the MODEL setting into a manifest entry and a file path. Named models are checked
 * for presence and size (their hash is checked by assemble-models.mjs at install and
 * start); a path is hashed, since it can be any file. `verify` hashes named models too.
 */
export async function resolveModel(opts: {
  model: string;
  modelsDir: string;
  manifest?: ModelManifest;
  verify?: boolean;
}): Promise<ResolvedModel | InferenceFailure> {
  let manifest = opts.manifest;
  if (!manifest) {
    const loaded = await loadManifest(join(opts.modelsDir, "manifest.json"));
    if (!loaded.ok) return loaded;
    manifest = loaded.manifest;
  }
  const names = Object.keys(manifest.models);
  const spec = opts.model.trim();

  const named = Object.hasOwn(manifest.models, spec) ? manifest.models[spec] : undefined;
  if (named) {
    const path = resolve(opts.modelsDir, named.file);
    const size = await fileSize(path);
    if (size === undefined) {
      return inferenceFailure("model_unavailable", `model "${spec}": ${path} is missing; run node scripts/assemble-models.mjs`);
    }
    if (size !== named.bytes || (opts.verify && (await sha256OfFile(path)) !== named.sha256)) {
      return inferenceFailure("model_unavailable", `model "${spec}": ${path} does not match the manifest; run node scripts/assemble-models.mjs`);
    }
    return { ok: true, name: spec, entry: named, path };
  }

  if (!spec.toLowerCase().endsWith(".onnx")) {
    return inferenceFailure(
      "model_unavailable",
      `unknown model "${spec}": use one of ${names.join(", ")} or a path to an .onnx file listed in the manifest`,
    );
  }
  const path = resolve(spec);
  const size = await fileSize(path);
  if (size === undefined) return inferenceFailure("model_unavailable", `model file ${path} does not exist`);
  const sha256 = await sha256OfFile(path);

  // A model of the caller's own may be described by a manifest.json in its folder; that
  // description comes first, then the package's.
  const besidePath = join(dirname(path), "manifest.json");
  if (resolve(besidePath) !== resolve(opts.modelsDir, "manifest.json") && (await fileSize(besidePath)) !== undefined) {
    const beside = await loadManifest(besidePath);
    if (!beside.ok) return beside;
    const found = entryFor(beside.manifest, path, sha256, size);
    if (found) return found;
  }
  return (
    entryFor(manifest, path, sha256, size) ??
    inferenceFailure(
      "model_unavailable",
      `model file ${path} (sha256 ${sha256}) ${NO_ENTRY} by file name or sha256; add one to models/manifest.json or to a manifest.json beside it`,
    )
  );
}

/** The entry of `manifest` that describes the file: by file name (then the hash must match) or by sha256. */
function entryFor(manifest: ModelManifest, path: string, sha256: string, size: number): ResolvedModel | InferenceFailure | undefined {
  const byName = Object.entries(manifest.models).find(([, e]) => e.file === basename(path));
  if (byName) {
    const [name, entry] = byName;
    if (entry.sha256 !== sha256 || entry.bytes !== size) {
      return inferenceFailure(
        "model_unavailable",
        `model file ${path} is named like manifest entry "${name}" but its sha256 ${sha256} differs from ${entry.sha256}`,
      );
    }
    return { ok: true, name, entry, path };
  }
  const byHash = Object.entries(manifest.models).find(([, e]) => e.sha256 === sha256);
  return byHash ? { ok: true, name: byHash[0], entry: byHash[1], path } : undefined;
}
