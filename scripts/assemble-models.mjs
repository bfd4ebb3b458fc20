// Builds models/*.onnx from @imgly/background-removal-data and copies the onnxruntime-web
// runtime into wasm/, all sha256-checked (src/engine/assets/assemble.ts does the work; the
// library does the same on first use). Run by `npm ci` (prepare) in this repository, and
// the explicit step for container builds: `npm run assemble`.
//
// Usage: node scripts/assemble-models.mjs [--quiet] [--root <package dir>] [--models a,b] [--runtimes wasm,webgpu]
//   --quiet     print only when something was (re)built or went wrong
//   --root      package directory holding models/manifest.json (default: this repo); its
//               dependencies are found from there as an import would find them (hoisting too)
//   --models    only these manifest entries (default: every entry with a source); the
//               container build assembles just the model it serves
//   --runtimes  only these onnxruntime-web builds (default: both); a Node service needs wasm
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register(); // the shared code is TypeScript; tsx is a runtime dependency
const { assembleAssets, AssembleError, ORT_RUNTIME_BUILDS } = await import("../src/engine/assets/assemble.ts");

function parseArgs(argv) {
  const opts = { quiet: false, root: resolve(dirname(fileURLToPath(import.meta.url)), ".."), models: undefined, runtimes: undefined };
  const list = (value) => value.split(",").map((v) => v.trim()).filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--quiet") opts.quiet = true;
    else if (argv[i] === "--root" && argv[i + 1]) opts.root = resolve(argv[++i]);
    else if (argv[i] === "--models" && argv[i + 1]) opts.models = list(argv[++i]);
    else if (argv[i] === "--runtimes" && argv[i + 1]) opts.runtimes = list(argv[++i]);
    else throw new AssembleError(`unknown argument: ${argv[i]}`);
  }
  for (const r of opts.runtimes ?? []) {
    if (!Object.hasOwn(ORT_RUNTIME_BUILDS, r)) throw new AssembleError(`unknown runtime build "${r}": use ${Object.keys(ORT_RUNTIME_BUILDS).join(", ")}`);
  }
  return opts;
}

try {
  const opts = parseArgs(process.argv.slice(2));
  const say = (msg) => console.log(`assemble-models: ${msg}`);
  const started = performance.now();
  const manifest = JSON.parse(readFileSync(join(opts.root, "models", "manifest.json"), "utf8"));
  for (const m of opts.models ?? []) {
    if (!manifest.models?.[m]?.source) throw new AssembleError(`unknown model "${m}": the manifest has ${Object.keys(manifest.models ?? {}).join(", ")}`);
  }
  const written = await assembleAssets({
    anchor: opts.root,
    manifest,
    modelsDir: join(opts.root, "models"),
    wasmDir: join(opts.root, "wasm"),
    models: opts.models,
    runtimes: opts.runtimes,
    say: (msg) => {
      if (!opts.quiet || !msg.endsWith("sha256 verified)")) say(msg);
    },
  });
  if (!opts.quiet || written > 0) say(`done in ${Math.round(performance.now() - started)} ms`);
} catch (err) {
  console.error(`assemble-models: ${err instanceof AssembleError ? err.message : err?.stack ?? String(err)}`);
  process.exit(1);
}
