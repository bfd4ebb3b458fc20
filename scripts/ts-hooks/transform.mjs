// How a TypeScript file becomes the JavaScript the test processes run, and where that
// JavaScript is kept. The options are tsx's (the development loop's loader), so a test
// sees the same code under either: esbuild's transform for this Node version, the
// compiler options of tsconfig.json (JSX through hono/jsx, verbatim module syntax), an
// inline source map so stack traces point into the .ts file.
// The cache is addressed by content: the key hashes the source text together with the
// options, the esbuild version and tsconfig.json, so an edited file, a new esbuild or a
// changed tsconfig simply misses; nothing is ever stale.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The folder the transformed files live in (ignored by git, npm and docker as node_modules is). */
export const CACHE_DIR = process.env.PD_TS_CACHE || join(ROOT, "node_modules/.cache/pixeldrop-ts");

/** Extensions this loader compiles. */
export const TS_FILE = /\.(ts|tsx|mts|cts)$/;

const tsconfig = readFileSync(join(ROOT, "tsconfig.json"), "utf8");
const esbuildVersion = (() => {
  try {
    return JSON.parse(readFileSync(join(ROOT, "node_modules/esbuild/package.json"), "utf8")).version;
  } catch {
    return "none";
  }
})();

/** esbuild transform options for `file` (tsx's, with tsconfig.json's compiler options). */
export function transformOptions(file) {
  return {
    loader: file.endsWith("x") ? "tsx" : "ts",
    format: file.endsWith(".cts") ? "cjs" : "esm",
    target: `node${process.versions.node}`,
    sourcefile: file,
    sourcemap: "inline",
    minifyWhitespace: true,
    keepNames: true,
    tsconfigRaw: tsconfig,
  };
}

const salt = `${esbuildVersion}\0${process.versions.node}\0${tsconfig}\0`;

/** Where the JavaScript for `source` (the text of `file`) is cached. */
export function cachePath(file, source) {
  const hash = createHash("sha1").update(salt).update(file).update("\0").update(source).digest("hex");
  return join(CACHE_DIR, hash.slice(0, 2), `${hash.slice(2)}.js`);
}

/** The cached JavaScript, or undefined on a miss. */
export function readCached(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Stores `code` at `path` by rename, so a process reading it never sees half a file. */
export function writeCached(path, code) {
  mkdirSync(join(path, ".."), { recursive: true });
  const scratch = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(scratch, code);
  renameSync(scratch, path);
}
