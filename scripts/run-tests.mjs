// Runs every test file under test/ with Node's test runner and tsx.
// Node 20's --test does not expand globs itself, so we collect the files here.
// Usage: node scripts/run-tests.mjs [dir-or-file ...]   (default: test/)
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name === "fixtures" || name.startsWith(".")) continue;
      collect(join(path, name), out);
    }
  } else if (path.endsWith(".test.ts")) out.push(path);
  return out;
}

const roots = process.argv.slice(2);
const files = (roots.length ? roots : ["test"]).flatMap((r) => collect(r, []));
if (files.length === 0) {
  console.error("no test files found");
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
