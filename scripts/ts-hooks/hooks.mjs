// Module hooks that let Node run our TypeScript (registered by ./register.mjs). A .ts or
// .tsx file keeps its own URL, so import.meta.url, paths relative to it and stack traces
// are the file's; only the source Node compiles is swapped for JavaScript, taken from the
// cache that ./precompile.mjs fills before the test jobs start, or made here on a miss.
// Resolution is Node's own: our modules import each other by their real file names
// (`./x.ts`), which Node resolves without help.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { TS_FILE, cachePath, readCached, transformOptions, writeCached } from "./transform.mjs";

let esbuild;

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !TS_FILE.test(new URL(url).pathname)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const source = readFileSync(file, "utf8");
  const path = cachePath(file, source);
  let code = readCached(path);
  if (code === undefined) {
    esbuild ??= await import("esbuild");
    code = (await esbuild.transform(source, transformOptions(file))).code;
    writeCached(path, code);
  }
  return { format: file.endsWith(".cts") ? "commonjs" : "module", source: code, shortCircuit: true };
}
