// Runs every test file under test/ with Node's test runner and tsx.
// Node 20's --test does not expand globs itself, so we collect the files here.
// Usage: node scripts/run-tests.mjs [dir-or-file ...]   (default: test/, then `deno task test`)
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

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
if (files.length === 0 && !roots.some((r) => r.startsWith("test/vitest"))) {
  console.error("no test files found");
  process.exit(1);
}
// The tests import the package by its name ("pixeldrop", "pixeldrop/client"), which
// resolves into dist/: build it first, so a test never runs against stale output.
const build = spawnSync(process.execPath, [fileURLToPath(new URL("./build.mjs", import.meta.url))], { stdio: "inherit" });
if (build.status !== 0) {
  console.error("build failed: not running the tests");
  process.exit(1);
}
// (With no files `node --test` would search the working directory itself: skip it.)
const result = files.length
  ? spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...files], { stdio: "inherit" })
  : { status: 0 };
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const statuses = [result.status ?? 1];
// A full run (no arguments), or `test/vitest`, runs the library's vitest suite twice: in
// vitest's default pool (child processes) and in --pool=threads, where our inference
// workers live inside vitest's own worker threads.
const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));
if ((roots.length === 0 || roots.some((r) => r.startsWith("test/vitest"))) && existsSync(vitest)) {
  for (const pool of [[], ["--pool=threads"]]) {
    console.log(`\n== the library under vitest ${pool.join(" ") || "(default pool)"}`);
    statuses.push(spawnSync(process.execPath, [vitest, "run", ...pool], { stdio: "inherit", cwd: ROOT }).status ?? 1);
  }
}
// A full run also runs the Deno unit suite (deno.json's "test" task) with the Deno binary
// the `deno` devDependency installs, when it is there.
const deno = fileURLToPath(new URL("../node_modules/.bin/deno", import.meta.url));
if (roots.length === 0 && existsSync(deno)) {
  console.log("\n== the unit suite under Deno (deno task test)");
  statuses.push(spawnSync(deno, ["task", "test"], { stdio: "inherit", cwd: ROOT }).status ?? 1);
}
process.exit(statuses.find((s) => s !== 0) ?? 0);
