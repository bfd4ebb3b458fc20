// Which model `auto` runs: on a hardware GPU, a model's GPU form (a manifest entry with
// `gpuFormOf` naming it, "autoBackend": "any") in its place, so the default weights run on
// the GPU with no extra download; elsewhere the model asked for. A software adapter (Mesa's
// lavapipe, llvmpipe) is no GPU here: the CPU's own form is faster than a rasteriser.
// Of a model's GPU forms, the one with float16 activations where the adapter offers
// `shader-f16` (faster and quicker to start: docs/MODEL.md, "The GPU form's graph"), else
// the float32 one.
import type { ModelManifest } from "./manifest.ts";
import { hardwareAdapter, hasWebGpu } from "./backend-ort-web.ts";
import type { GpuAdapterFacts } from "./gpu-doctor.ts";

/** The manifest name of `model`'s GPU form for an adapter with `features`, if it has one. */
export function gpuFormName(manifest: ModelManifest, model: string, features: readonly string[] = []): string | undefined {
  const forms = Object.entries(manifest.models).filter(([, e]) => e.gpuFormOf === model && e.autoBackend === "any");
  const half = forms.find(([, e]) => e.gpuActivations === "float16");
  if (half && features.includes("shader-f16")) return half[0];
  return forms.find(([, e]) => (e.gpuActivations ?? "float32") === "float32")?.[0];
}

/**
 * The model to run for `model` on `backend`: its GPU form under "auto" when a hardware
 * adapter exists (asked last: it starts the adapter), else `model` itself.
 */
export async function modelForBackend(
  manifest: ModelManifest,
  model: string,
  backend: string,
  adapter: () => Promise<GpuAdapterFacts | null | undefined> = hardwareAdapter,
): Promise<string> {
  if (backend !== "auto" || !hasWebGpu() || !gpuFormName(manifest, model)) return model;
  const found = await adapter();
  return found && !found.software ? (gpuFormName(manifest, model, found.features) ?? model) : model;
}
