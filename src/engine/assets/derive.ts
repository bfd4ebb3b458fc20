// Models made from another model's bytes at assemble time. A manifest entry with
// `derive` is built from its `source` resource (every chunk checked as usual), then
// transformed here; the result must hash to the entry's sha256 like any other model.
// Two quantisations: dynamic int8 (quantise.ts) and static int8 with the activation ranges
// written in the spec itself (quantise-static.ts), so an install runs no model to make it.
// Then, or alone, `sizeFree`: the graph made to take any input side that is a multiple of
// 64 and to return only the mask (size-free.ts).
import { readFile, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { deriveQuantisedModel, type QuantiseOptions } from "./quantise.ts";
import { prepareStatic, quantiseStatic, type ActivationRanges } from "./quantise-static.ts";
import { parseModel, writeModel } from "./onnx-graph.ts";
import { makeSizeFree, type SizeFreeOptions } from "./size-free.ts";

export interface StaticSpec {
  /** Node name prefixes left in float. */
  keepFloat: string[];
  /** Per quantised tensor, [low, high] from a calibration run (scripts/quantise-model.mjs --calibrate). */
  ranges: ActivationRanges;
}

export type DeriveSpec = ({ quantise: QuantiseOptions } | { quantiseStatic: StaticSpec } | {}) & { sizeFree?: SizeFreeOptions };

const SHAPE =
  'derive must be { quantise: { scales: "per-channel" | "per-tensor", symmetric: boolean, keepFloat: string[] } } or { quantiseStatic: { keepFloat: string[], ranges: { [tensor]: [low, high] } } }, either with or instead of { sizeFree: { keepOutputs: string[] } }';

const isNames = (v: unknown): v is string[] => Array.isArray(v) && v.every((p) => typeof p === "string");
const isRange = (r: unknown) => Array.isArray(r) && r.length === 2 && r.every(Number.isFinite) && r[0] <= r[1];

/** Checks a manifest's `derive` value; throws with what is wrong. */
export function checkDeriveSpec(spec: unknown): DeriveSpec {
  const s = spec as { quantise?: Partial<QuantiseOptions>; quantiseStatic?: Partial<StaticSpec>; sizeFree?: Partial<SizeFreeOptions> } | null;
  const q = s?.quantise;
  const st = s?.quantiseStatic;
  const sf = s?.sizeFree;
  const sizeFreeOk = sf === undefined || (isNames(sf.keepOutputs) && sf.keepOutputs.length > 0);
  const dynamicOk =
    q !== undefined && st === undefined && (q.scales === "per-channel" || q.scales === "per-tensor") && typeof q.symmetric === "boolean" && isNames(q.keepFloat);
  const staticOk =
    st !== undefined &&
    q === undefined &&
    isNames(st.keepFloat) &&
    typeof st.ranges === "object" &&
    st.ranges !== null &&
    Object.keys(st.ranges).length > 0 &&
    Object.values(st.ranges).every(isRange);
  const sizeFreeOnly = sf !== undefined && q === undefined && st === undefined;
  if (!sizeFreeOk || (!dynamicOk && !staticOk && !sizeFreeOnly)) throw new Error(`${SHAPE}, got ${JSON.stringify(spec).slice(0, 300)}`);
  return spec as DeriveSpec;
}

/** The derived model's bytes from its source's. */
export function deriveModel(source: Uint8Array, spec: unknown): Uint8Array {
  const checked = checkDeriveSpec(spec);
  let bytes = source;
  if ("quantise" in checked) bytes = deriveQuantisedModel(source, checked.quantise).bytes;
  else if ("quantiseStatic" in checked) bytes = quantiseStatic(prepareStatic(source, checked.quantiseStatic.keepFloat), checked.quantiseStatic.ranges).bytes;
  if (!checked.sizeFree) return bytes;
  const model = parseModel(bytes);
  makeSizeFree(model, checked.sizeFree);
  return writeModel(model);
}

/** Replaces the source model at `path` by the derived one; returns the new file's sha256. */
export async function deriveInPlace(path: string, spec: unknown): Promise<string> {
  const bytes = deriveModel(new Uint8Array(await readFile(path)), spec);
  await writeFile(path, bytes);
  return createHash("sha256").update(bytes).digest("hex");
}
