// Importing "pixeldrop" loads the engine only. Walks the module graph of the built entry
// (dist/index.js; static imports, re-exports and literal dynamic imports) and lists every
// package and every folder of ours it can reach: no HTTP framework, database, Redis,
// logger, metrics, mail, console or gateway code may be among them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));
const SPECIFIERS = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^import\s*["']([^"']+)["']/gm;

function reach(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIERS)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (spec.startsWith(".")) queue.push(join(dirname(file), spec));
      else if (!spec.startsWith("node:")) packages.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);
    }
  }
  return { files, packages };
}

const SERVICE_ONLY = ["hono", "@hono/node-server", "@electric-sql/pglite", "pg", "ioredis", "pino", "prom-client", "nodemailer", "tsx"];
// The library side (docs/ARCHITECTURE.md): the entry, the engine and the words it shares
// with the service. Any other folder of dist/ is the service's.
const LIBRARY_SIDE = ["index.js", "engine", "contract"];

test("the package entry reaches the engine's packages and folders only", () => {
  const { files, packages } = reach(join(DIST, "index.js"));
  assert.ok(files.size > 20, `the walk found the engine (${files.size} files)`);
  for (const pkg of SERVICE_ONLY) assert.ok(!packages.has(pkg), `"pixeldrop" reaches ${pkg}`);
  const folders = new Set([...files].map((f) => relative(DIST, f).split("/")[0]!));
  const outside = [...folders].filter((f) => !LIBRARY_SIDE.includes(f));
  assert.deepEqual(outside, [], `"pixeldrop" reaches service folders of dist/`);
  // What it does load: the model runtime and the codecs.
  for (const pkg of ["onnxruntime-web", "zod"]) assert.ok(packages.has(pkg), `expected ${pkg} among ${[...packages].join(", ")}`);
});
