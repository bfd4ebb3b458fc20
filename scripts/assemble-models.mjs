// Builds models/*.onnx from the chunked copies shipped in @imgly/background-removal-data
// and copies the onnxruntime-web runtime files into wasm/. Runs as npm postinstall and
// prestart, so it must be quick when everything is already in place: it re-hashes the
// assembled models (about 0.2 s for both on this machine) instead of trusting a stamp.
// Nothing is downloaded; every byte comes from node_modules and is checked by sha256.
//
// Usage: node scripts/assemble-models.mjs [--quiet] [--root <project dir>]
//   --quiet  print only when something was (re)built or went wrong
//   --root   project directory holding node_modules/, models/ and wasm/ (default: this repo)
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { open, readFile, copyFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The runtime files our backends load: the plain build (Node's onnxruntime-web entry and
// the wasm backend) and the asyncify build (the webgpu entry, used under Deno).
const ORT_RUNTIME_FILES = [
  "ort-wasm-simd-threaded.mjs",
  "ort-wasm-simd-threaded.wasm",
  "ort-wasm-simd-threaded.asyncify.mjs",
  "ort-wasm-simd-threaded.asyncify.wasm",
];

class AssembleError extends Error {}

function parseArgs(argv) {
  const opts = { quiet: false, root: resolve(dirname(fileURLToPath(import.meta.url)), "..") };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--quiet") opts.quiet = true;
    else if (argv[i] === "--root" && argv[i + 1]) opts.root = resolve(argv[++i]);
    else throw new AssembleError(`unknown argument: ${argv[i]}`);
  }
  return opts;
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

async function hashFile(path) {
  const hash = createHash("sha256");
  const fh = await open(path, "r");
  try {
    const buf = Buffer.allocUnsafe(8 * 1024 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return hash.digest("hex");
}

function readJson(path, what) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new AssembleError(`cannot read ${what} at ${path}: ${err.message}`);
  }
}

/** True when the file exists with the manifest's size and hash. */
async function isIntact(path, entry) {
  if (!existsSync(path) || statSync(path).size !== entry.bytes) return false;
  return (await hashFile(path)) === entry.sha256;
}

/**
 * Writes the model from its chunks into a temporary file, checking each chunk against the
 * hash it is named by and the whole file against the manifest, then renames it into place
 * so a reader never sees a half-written model.
 */
async function assembleModel(root, modelsDir, name, entry) {
  const { package: pkg, version, resource } = entry.source;
  const pkgDir = join(root, "node_modules", ...pkg.split("/"));
  const installed = readJson(join(pkgDir, "package.json"), `${pkg} package.json`).version;
  const resources = readJson(join(pkgDir, "dist", "resources.json"), `${pkg} resources.json`);
  const res = resources[resource];
  const hint = installed === version ? "" : ` (manifest expects ${pkg}@${version}, installed is ${installed})`;
  if (!res) throw new AssembleError(`model ${name}: ${resource} not found in ${pkg} resources.json${hint}`);
  if (res.size !== entry.bytes) {
    throw new AssembleError(`model ${name}: ${resource} is ${res.size} bytes, manifest says ${entry.bytes}${hint}`);
  }

  const target = join(modelsDir, entry.file);
  const temp = `${target}.tmp-${process.pid}`;
  const whole = createHash("sha256");
  const out = await open(temp, "w");
  try {
    let expectedStart = 0;
    for (const chunk of res.chunks) {
      const [start, end] = chunk.offsets;
      if (start !== expectedStart) throw new AssembleError(`model ${name}: chunk ${chunk.hash} starts at ${start}, expected ${expectedStart}`);
      const bytes = await readFile(join(pkgDir, "dist", chunk.hash)).catch((err) => {
        throw new AssembleError(`model ${name}: chunk ${chunk.hash} missing: ${err.message}`);
      });
      if (bytes.length !== end - start || sha256(bytes) !== chunk.hash) {
        throw new AssembleError(`model ${name}: chunk ${chunk.hash} is corrupt (length or sha256 mismatch)`);
      }
      whole.update(bytes);
      await out.write(bytes, 0, bytes.length, start);
      expectedStart = end;
    }
    if (expectedStart !== entry.bytes) throw new AssembleError(`model ${name}: chunks cover ${expectedStart} of ${entry.bytes} bytes`);
  } catch (err) {
    await out.close();
    rmSync(temp, { force: true });
    throw err;
  }
  await out.close();
  const got = whole.digest("hex");
  if (got !== entry.sha256) {
    rmSync(temp, { force: true });
    throw new AssembleError(`model ${name}: assembled sha256 ${got} does not match manifest ${entry.sha256}${hint}`);
  }
  renameSync(temp, target);
}

/** Copies a runtime file unless an identical copy is already there; returns true if copied. */
async function syncRuntimeFile(fromDir, toDir, file) {
  const from = join(fromDir, file);
  const to = join(toDir, file);
  if (!existsSync(from)) throw new AssembleError(`onnxruntime-web runtime file missing: ${from}`);
  if (existsSync(to) && statSync(to).size === statSync(from).size && (await hashFile(to)) === (await hashFile(from))) {
    return false;
  }
  const temp = `${to}.tmp-${process.pid}`;
  await copyFile(from, temp);
  renameSync(temp, to);
  return true;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const say = (msg) => console.log(`assemble-models: ${msg}`);
  const modelsDir = join(opts.root, "models");
  const manifest = readJson(join(modelsDir, "manifest.json"), "model manifest");
  const started = performance.now();
  let work = 0;

  for (const [name, entry] of Object.entries(manifest.models ?? {})) {
    if (!entry.source) continue; // a model supplied by the operator, not built from a package
    const target = join(modelsDir, entry.file);
    if (await isIntact(target, entry)) {
      if (!opts.quiet) say(`${entry.file} ok (${entry.bytes} bytes, sha256 verified)`);
      continue;
    }
    await assembleModel(opts.root, modelsDir, name, entry);
    work++;
    say(`assembled ${entry.file} from ${entry.source.package}@${entry.source.version} ${entry.source.resource}`);
  }

  const ortDist = join(opts.root, "node_modules", "onnxruntime-web", "dist");
  const wasmDir = join(opts.root, "wasm");
  mkdirSync(wasmDir, { recursive: true });
  for (const file of ORT_RUNTIME_FILES) {
    if (await syncRuntimeFile(ortDist, wasmDir, file)) {
      work++;
      say(`copied ${file} to wasm/`);
    }
  }
  if (!opts.quiet || work > 0) say(`done in ${Math.round(performance.now() - started)} ms`);
}

main().catch((err) => {
  const msg = err instanceof AssembleError ? err.message : err?.stack ?? String(err);
  console.error(`assemble-models: ${msg}`);
  process.exit(1);
});
