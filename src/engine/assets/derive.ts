// Models made from another model's bytes at assemble time. A manifest entry with
// `derive` is built from its `source` resource (every chunk checked as usual), then
// transformed here; the result must hash to the entry's sha256 like any other model.
import { readFile, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { deriveQuantisedModel, type QuantiseOptions } from "./quantise.ts";

export interface DeriveSpec {
  /** Dynamic int8 quantisation of the source's convolutions (src/engine/assets/quantise.ts). */
  quantise: QuantiseOptions;
}

/** Checks a manifest's `derive` value; throws with what is wrong. */
export function checkDeriveSpec(spec: unknown): DeriveSpec {
  const q = (spec as { quantise?: Partial<QuantiseOptions> } | null)?.quantise;
  const ok =
    q !== undefined &&
    (q.scales === "per-channel" || q.scales === "per-tensor") &&
    typeof q.symmetric === "boolean" &&
    Array.isArray(q.keepFloat) &&
    q.keepFloat.every((p) => typeof p === "string");
  if (!ok) throw new Error(`derive must be { quantise: { scales: "per-channel" | "per-tensor", symmetric: boolean, keepFloat: string[] } }, got ${JSON.stringify(spec)}`);
  return spec as DeriveSpec;
}

/** Replaces the source model at `path` by the derived one; returns the new file's sha256. */
export async function deriveInPlace(path: string, spec: unknown): Promise<string> {
  const { quantise } = checkDeriveSpec(spec);
  const { bytes } = deriveQuantisedModel(new Uint8Array(await readFile(path)), quantise);
  await writeFile(path, bytes);
  return createHash("sha256").update(bytes).digest("hex");
}
