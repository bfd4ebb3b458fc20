// Models made from another model's bytes at assemble time. A manifest entry with
// `derive` is built from its `source` resource (every chunk checked as usual), then
// transformed here; the result must hash to the entry's sha256 like any other model.
// Two transforms: dynamic int8 (quantise.ts) and static int8 with the activation ranges
// written in the spec itself (quantise-static.ts), so an install runs no model to make it.
import { readFile, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { deriveQuantisedModel, type QuantiseOptions } from "./quantise.ts";
import { prepareStatic, quantiseStatic, type ActivationRanges } from "./quantise-static.ts";

export interface StaticSpec {
  /** Node name prefixes left in float. */
  keepFloat: string[];
  /** Per quantised tensor, [low, high] from a calibration run (scripts/quantise-model.mjs --calibrate). */
  ranges: ActivationRanges;
}

export type DeriveSpec = { quantise: QuantiseOptions } | { quantiseStatic: StaticSpec };

const SHAPE =
  'derive must be { quantise: { scales: "per-channel" | "per-tensor", symmetric: boolean, keepFloat: string[] } } or { quantiseStatic: { keepFloat: string[], ranges: { [tensor]: [low, high] } } }';

const isNames = (v: unknown): v is string[] => Array.isArray(v) && v.every((p) => typeof p === "string");
const isRange = (r: unknown) => Array.isArray(r) && r.length === 2 && r.every(Number.isFinite) && r[0] <= r[1];

/** Checks a manifest's `derive` value; throws with what is wrong. */
export function checkDeriveSpec(spec: unknown): DeriveSpec {
  const s = spec as { quantise?: Partial<QuantiseOptions>; quantiseStatic?: Partial<StaticSpec> } | null;
  const q = s?.quantise;
  const st = s?.quantiseStatic;
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
  if (!dynamicOk && !staticOk) throw new Error(`${SHAPE}, got ${JSON.stringify(spec).slice(0, 300)}`);
  return spec as DeriveSpec;
}

/** The derived model's bytes from its source's. */
export function deriveModel(source: Uint8Array, spec: unknown): Uint8Array {
  const checked = checkDeriveSpec(spec);
  if ("quantise" in checked) return deriveQuantisedModel(source, checked.quantise).bytes;
  const { keepFloat, ranges } = checked.quantiseStatic;
  return quantiseStatic(prepareStatic(source, keepFloat), ranges).bytes;
}

/** Replaces the source model at `path` by the derived one; returns the new file's sha256. */
export async function deriveInPlace(path: string, spec: unknown): Promise<string> {
  const bytes = deriveModel(new Uint8Array(await readFile(path)), spec);
  await writeFile(path, bytes);
  return createHash("sha256").update(bytes).digest("hex");
}
