// Builds models/*.onnx from @imgly/background-removal-data and copies the onnxruntime-web
// runtime into wasm/, all sha256-checked (src/assets/assemble.ts does the work; the
// library does the same on first use). Run by `npm ci` (prepare) in this repository, and
// the explicit step for container builds: `npm run assemble`.
//
// Usage: node scripts/assemble-models.mjs [--quiet] [--root <package dir>]
//   --quiet  print only when something was (re)built or went wrong
//   --root   package directory holding models/manifest.json (default: this repo); its
//            dependencies are found from there as an import would find them (hoisting too)
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register(); // the shared code is TypeScript; tsx is a runtime dependency
const { assembleAssets, AssembleError } = await import("../src/assets/assemble.ts");

function parseArgs(argv) {
  const opts = { quiet: false, root: resolve(dirname(fileURLToPath(import.meta.url)), "..") };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--quiet") opts.quiet = true;
    else if (argv[i] === "--root" && argv[i + 1]) opts.root = resolve(argv[++i]);
    else throw new AssembleError(`unknown argument: ${argv[i]}`);
  }
  return opts;
}

try {
  const opts = parseArgs(process.argv.slice(2));
  const say = (msg) => console.log(`assemble-models: ${msg}`);
  const started = performance.now();
  const manifest = JSON.parse(readFileSync(join(opts.root, "models", "manifest.json"), "utf8"));
  const written = await assembleAssets({
    anchor: opts.root,
    manifest,
    modelsDir: join(opts.root, "models"),
    wasmDir: join(opts.root, "wasm"),
    say: (msg) => {
      if (!opts.quiet || !msg.endsWith("sha256 verified)")) say(msg);
    },
  });
  if (!opts.quiet || written > 0) say(`done in ${Math.round(performance.now() - started)} ms`);
} catch (err) {
  console.error(`assemble-models: ${err instanceof AssembleError ? err.message : err?.stack ?? String(err)}`);
  process.exit(1);
}
