// Which model `auto` runs: on a hardware GPU, a model's GPU form (a manifest entry with
// `gpuFormOf` naming it, "autoBackend": "any") in its place, so the default weights run on
// the GPU with no extra download; elsewhere the model asked for. A software adapter (Mesa's
// lavapipe, llvmpipe) is no GPU here: the CPU's own form is faster than a rasteriser.
import type { ModelManifest } from "./manifest.ts";
import { hasHardwareGpu, hasWebGpu } from "./backend-ort-web.ts";

/** The manifest name of `model`'s GPU form, if it has one. */
export function gpuFormName(manifest: ModelManifest, model: string): string | undefined {
  return Object.entries(manifest.models).find(([, e]) => e.gpuFormOf === model && e.autoBackend === "any")?.[0];
}

/**
 * The model to run for `model` on `backend`: its GPU form under "auto" when a hardware
 * adapter exists (asked last: it starts the adapter), else `model` itself.
 */
export async function modelForBackend(
  manifest: ModelManifest,
  model: string,
  backend: string,
  hardwareGpu: () => Promise<boolean> = hasHardwareGpu,
): Promise<string> {
  if (backend !== "auto" || !hasWebGpu()) return model;
  const gpu = gpuFormName(manifest, model);
  return gpu && (await hardwareGpu()) ? gpu : model;
}
