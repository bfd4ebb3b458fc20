// Builds the model files from the chunked copies shipped in @imgly/background-removal-data
// and copies the onnxruntime-web runtime files next to them. Nothing is downloaded: every
// byte comes from installed packages and is checked by sha256 (each chunk by the hash it
// is named by, the whole file by the manifest).
//
// The packages are found with Node's module resolver from `anchor` (the directory of the
// package that needs them), so npm's hoisting is handled: the resolver walks up through
// every node_modules/ above the anchor, as an import would. Used by the library on first
// use (src/engine/assets/locate.ts), by `npm ci` (scripts/assemble-models.mjs) and by the
// `pixeldrop assemble` command for container builds.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { copyFile, open, readFile, writeFile } from "node:fs/promises";
import { sha256OfFile } from "../inference/file-hash.ts";
import { deriveInPlace } from "./derive.ts";
import { gpuFormOfFile, type GpuActivations } from "./dequantise-float.ts";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The part of a manifest entry (src/engine/inference/manifest.ts) that assembling needs. */
export interface AssetEntry {
  file: string;
  sha256: string;
  bytes: number;
  source?: { package: string; version: string; resource: string };
  /** Made from the source's bytes at assemble time (src/engine/assets/derive.ts). */
  derive?: unknown;
  /**
   * The GPU form of another entry (a static int8 model): made from that entry's file as it
   * is on disk (src/engine/assets/dequantise-float.ts), so it needs no data package.
   */
  gpuFormOf?: string;
  /** A GPU form's activations (default float32). */
  gpuActivations?: GpuActivations;
}
export interface AssetManifest {
  models: Record<string, AssetEntry>;
}

/** The onnxruntime-web runtime builds our backends load, and their files. */
export const ORT_RUNTIME_BUILDS = {
  /** The plain SIMD + threads build: the wasm backend (and auto without WebGPU). */
  wasm: ["ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"],
  /** The asyncify build, loaded by onnxruntime-web/webgpu. */
  webgpu: ["ort-wasm-simd-threaded.asyncify.mjs", "ort-wasm-simd-threaded.asyncify.wasm"],
} as const;
export type OrtRuntimeBuild = keyof typeof ORT_RUNTIME_BUILDS;
export const ORT_RUNTIME_FILES = [...ORT_RUNTIME_BUILDS.wasm, ...ORT_RUNTIME_BUILDS.webgpu];

export class AssembleError extends Error {
  override name = "AssembleError";
}

type Say = (msg: string) => void;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new AssembleError(`cannot read ${what} at ${path}: ${(err as Error).message}`);
  }
}

/** The installed directory of a package, as an import from `anchor` would find it. */
function packageDir(anchor: string, pkg: string, file?: string): string {
  const require = createRequire(join(anchor, "package.json"));
  try {
    return dirname(require.resolve(file ? `${pkg}/${file}` : pkg));
  } catch (err) {
    throw new AssembleError(`cannot find the package ${pkg} from ${anchor} (${(err as Error).message.split("\n")[0]}); install it (npm install ${pkg})`);
  }
}

/** Where onnxruntime-web keeps its runtime files (its dist/ folder). */
export function ortDistDir(anchor: string): string {
  // The package's main entry lives in dist/, beside the runtime files.
  return packageDir(anchor, "onnxruntime-web");
}

/** True when the file exists with the manifest's size and hash. */
export async function isIntact(path: string, entry: Pick<AssetEntry, "bytes" | "sha256">): Promise<boolean> {
  if (!existsSync(path) || statSync(path).size !== entry.bytes) return false;
  return (await sha256OfFile(path)) === entry.sha256;
}

interface Resources {
  [resource: string]: { size: number; chunks: { hash: string; offsets: [number, number] }[] } | undefined;
}

/**
 * Writes one model from its chunks into a temporary file, then renames it into place so a
 * reader never sees a half-written model (and two processes assembling at once both end
 * with the same whole file).
 */
async function assembleModel(anchor: string, modelsDir: string, name: string, entry: AssetEntry): Promise<void> {
  const { package: pkg, version, resource } = entry.source!;
  const pkgDir = packageDir(anchor, pkg, "package.json");
  const installed = (readJson(join(pkgDir, "package.json"), `${pkg} package.json`) as { version?: string }).version;
  const resources = readJson(join(pkgDir, "dist", "resources.json"), `${pkg} resources.json`) as Resources;
  const res = resources[resource];
  const hint = installed === version ? "" : ` (manifest expects ${pkg}@${version}, installed is ${installed})`;
  if (!res) throw new AssembleError(`model ${name}: ${resource} not found in ${pkg} resources.json${hint}`);
  if (!entry.derive && res.size !== entry.bytes) throw new AssembleError(`model ${name}: ${resource} is ${res.size} bytes, manifest says ${entry.bytes}${hint}`);

  mkdirSync(modelsDir, { recursive: true });
  const target = join(modelsDir, entry.file);
  const temp = `${target}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const whole = createHash("sha256");
  const out = await open(temp, "w");
  try {
    let expectedStart = 0;
    for (const chunk of res.chunks) {
      const [start, end] = chunk.offsets;
      if (start !== expectedStart) throw new AssembleError(`model ${name}: chunk ${chunk.hash} starts at ${start}, expected ${expectedStart}`);
      const bytes = await readFile(join(pkgDir, "dist", chunk.hash)).catch((err: Error) => {
        throw new AssembleError(`model ${name}: chunk ${chunk.hash} missing: ${err.message}`);
      });
      if (bytes.length !== end - start || sha256(bytes) !== chunk.hash) {
        throw new AssembleError(`model ${name}: chunk ${chunk.hash} is corrupt (length or sha256 mismatch)`);
      }
      whole.update(bytes);
      await out.write(bytes, 0, bytes.length, start);
      expectedStart = end;
    }
    if (expectedStart !== res.size) throw new AssembleError(`model ${name}: chunks cover ${expectedStart} of ${res.size} bytes`);
  } catch (err) {
    await out.close();
    rmSync(temp, { force: true });
    throw err;
  }
  await out.close();
  let got = whole.digest("hex");
  if (entry.derive) {
    got = await deriveInPlace(temp, entry.derive).catch((err: Error) => {
      rmSync(temp, { force: true });
      throw new AssembleError(`model ${name}: cannot derive it from ${resource}: ${err.message}`);
    });
  }
  if (got !== entry.sha256) {
    rmSync(temp, { force: true });
    throw new AssembleError(`model ${name}: assembled sha256 ${got} does not match manifest ${entry.sha256}${hint}`);
  }
  renameSync(temp, target);
}

/** Writes a GPU form from its static int8 model's file (already made whole), then checks its sha256. */
async function assembleGpuForm(modelsDir: string, name: string, entry: AssetEntry, from: AssetEntry, fromDir: string): Promise<void> {
  const target = join(modelsDir, entry.file);
  const { bytes, sha256: got } = await gpuFormOfFile(join(fromDir, from.file), entry.gpuActivations).catch((err: Error) => {
    throw new AssembleError(`model ${name}: cannot derive it from ${from.file}: ${err.message}`);
  });
  if (got !== entry.sha256) {
    throw new AssembleError(`model ${name}: derived sha256 ${got} (${bytes.length} bytes) from ${from.file} does not match manifest ${entry.sha256}`);
  }
  const temp = `${target}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  await writeFile(temp, bytes);
  renameSync(temp, target);
}

/**
 * The licence of the package a model is built from, kept beside the model in models/ so
 * that wherever the model file travels (the npm tarball, a container image) its terms go
 * with it. Named after the package: models/background-removal-data.LICENSE.md.
 */
export function licenceFileName(entry: AssetEntry): string | undefined {
  return entry.source ? `${entry.source.package.split("/").pop()}.LICENSE.md` : undefined;
}

/**
 * Best effort: where the source package is installed and the licence is not in modelsDir
 * yet, copy it. A model that is already intact never fails to load over its licence file
 * (an install without the package got both from the tarball).
 */
async function keepLicence(anchor: string, modelsDir: string, entry: AssetEntry): Promise<void> {
  const name = licenceFileName(entry);
  if (!name || existsSync(join(modelsDir, name))) return;
  try {
    const pkgDir = packageDir(anchor, entry.source!.package, "package.json");
    const from = ["LICENSE.md", "LICENSE", "LICENSE.txt"].map((f) => join(pkgDir, f)).find((f) => existsSync(f));
    if (!from) return;
    const temp = join(modelsDir, `${name}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
    await copyFile(from, temp);
    renameSync(temp, join(modelsDir, name));
  } catch {
    // Not installed, or models/ not writable: the model itself is what the engine needs.
  }
}

/**
 * Copies a runtime file unless an identical copy is already there; true if copied. A copy
 * takes its source's modification time, so a later start recognises it by size and time
 * without reading either file (hashing both took 0.1-0.3 s of every start here); a copy
 * whose size or time differs is compared by content.
 */
async function syncRuntimeFile(fromDir: string, toDir: string, file: string): Promise<boolean> {
  const from = join(fromDir, file);
  const to = join(toDir, file);
  if (!existsSync(from)) throw new AssembleError(`onnxruntime-web runtime file missing: ${from}`);
  if (existsSync(to)) {
    const [a, b] = [statSync(from), statSync(to)];
    if (a.size === b.size && (a.mtimeMs === b.mtimeMs || (await sha256OfFile(to)) === (await sha256OfFile(from)))) return false;
  }
  const temp = `${to}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  await copyFile(from, temp);
  const { atime, mtime } = statSync(from);
  utimesSync(temp, atime, mtime);
  renameSync(temp, to);
  return true;
}

export interface AssembleOptions {
  /** Directory of the package that depends on the data and runtime packages. */
  anchor: string;
  manifest: AssetManifest;
  modelsDir: string;
  wasmDir: string;
  /** Only these manifest entries (default: every entry with a source). */
  models?: readonly string[];
  /**
   * "size": a model file of the manifest's size counts as intact without hashing it, for
   * callers whose session hashes the bytes it loads (src/engine/inference/model-bytes.ts) and
   * asks again with "sha256" when that check fails. Default "sha256".
   */
  modelCheck?: "sha256" | "size";
  /**
   * Folders that may already hold a GPU form's source model intact (the package's own
   * models/ when modelsDir is a cache): read from there, never rebuilt there.
   */
  sourceDirs?: readonly string[];
  /** Only these runtime builds (default: both). */
  runtimes?: readonly OrtRuntimeBuild[];
  /** Reports each file checked, built or copied. */
  say?: Say;
}

/** Makes modelsDir and wasmDir whole; returns how many files it had to write. */
export async function assembleAssets(opts: AssembleOptions): Promise<number> {
  const say = opts.say ?? (() => {});
  let written = 0;
  const all = Object.entries(opts.manifest.models);
  // A GPU form asked for brings the model it is made from; forms come after their sources.
  const asked = new Set(opts.models ?? all.map(([name]) => name));
  const sourceOnly = new Set<string>();
  for (const [name, entry] of all) {
    if (!asked.has(name) || !entry.gpuFormOf || asked.has(entry.gpuFormOf)) continue;
    asked.add(entry.gpuFormOf);
    sourceOnly.add(entry.gpuFormOf);
  }
  const sized = (dir: string, e: AssetEntry) => existsSync(join(dir, e.file)) && statSync(join(dir, e.file)).size === e.bytes;
  /** Where a GPU form's source is read from: modelsDir, else a source folder holding it. */
  const sourceDir = (e: AssetEntry) => [opts.modelsDir, ...(opts.sourceDirs ?? [])].find((d) => sized(d, e)) ?? opts.modelsDir;
  const ordered = [...all.filter(([, e]) => !e.gpuFormOf), ...all.filter(([, e]) => e.gpuFormOf)];
  for (const [name, entry] of ordered) {
    if (!entry.source || !asked.has(name)) continue; // operator-supplied or not asked for
    // A source that is only read (for its GPU form) may stay in a source folder.
    if (sourceOnly.has(name) && (opts.sourceDirs ?? []).some((d) => sized(d, entry))) continue;
    const path = join(opts.modelsDir, entry.file);
    if (opts.modelCheck === "size" ? existsSync(path) && statSync(path).size === entry.bytes : await isIntact(path, entry)) {
      say(`${entry.file} ok (${entry.bytes} bytes, ${opts.modelCheck === "size" ? "size checked" : "sha256 verified"})`);
      await keepLicence(opts.anchor, opts.modelsDir, entry);
      continue;
    }
    const from = entry.gpuFormOf ? opts.manifest.models[entry.gpuFormOf] : undefined;
    if (entry.gpuFormOf && !from) throw new AssembleError(`model ${name}: gpuFormOf names "${entry.gpuFormOf}", which the manifest lacks`);
    if (from) await assembleGpuForm(opts.modelsDir, name, entry, from, sourceDir(from));
    else await assembleModel(opts.anchor, opts.modelsDir, name, entry);
    written++;
    say(from ? `derived ${entry.file} from ${from.file}` : `assembled ${entry.file} from ${entry.source.package}@${entry.source.version} ${entry.source.resource}`);
    await keepLicence(opts.anchor, opts.modelsDir, entry);
  }
  const files = (opts.runtimes ?? ["wasm", "webgpu"]).flatMap((build) => ORT_RUNTIME_BUILDS[build]);
  if (files.length === 0) return written;
  const ortDist = ortDistDir(opts.anchor);
  mkdirSync(opts.wasmDir, { recursive: true });
  for (const file of files) {
    if (await syncRuntimeFile(ortDist, opts.wasmDir, file)) {
      written++;
      say(`copied ${file} to ${opts.wasmDir}`);
    }
  }
  return written;
}
