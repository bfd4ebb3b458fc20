// Fills the loader's cache (./transform.mjs) with every TypeScript file under the folders
// given, in one process, so the test processes only read JavaScript.
//   node scripts/ts-hooks/precompile.mjs src test bench scripts
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { transform } from "esbuild";
import { TS_FILE, cachePath, readCached, transformOptions, writeCached } from "./transform.mjs";

function collect(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) collect(path, out);
    else if (TS_FILE.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Compiles the files under `dirs` that the cache lacks; returns how many there were and how many it compiled. */
export async function precompile(dirs) {
  const files = dirs.flatMap((d) => collect(resolve(d), []));
  const misses = [];
  for (const file of files) {
    const source = readFileSync(file, "utf8");
    const path = cachePath(file, source);
    if (readCached(path) === undefined) misses.push({ file, source, path });
  }
  await Promise.all(
    misses.map(async ({ file, source, path }) => {
      // A file esbuild cannot parse is left to fail in the test that loads it, with its own message.
      const result = await transform(source, transformOptions(file)).catch(() => undefined);
      if (result) writeCached(path, result.code);
    }),
  );
  return { files: files.length, compiled: misses.length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = performance.now();
  const { files, compiled } = await precompile(process.argv.slice(2));
  console.log(`ts-hooks: ${compiled} of ${files} TypeScript files compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
