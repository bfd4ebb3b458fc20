// `npm run build`: src/ to dist/ (JavaScript + declarations) with the emit settings of
// tsconfig.build.json, plus the non-code files the modules read beside themselves (the
// console's pictures). A fresh dist/ every time, so a deleted source never lingers in the
// package. Run by prepack (npm pack / publish) and by scripts/run-tests.mjs, since the
// tests import the package by its name, which resolves into dist/.
// The output is written to a scratch folder and swapped in by rename, so a process that
// is importing from dist/ while another build runs never sees it half written.
// dist/build-stamp.json records which sources it was built from (src/build-stamp.mjs): the
// CLI and the service refuse to run a dist/ older than the src/ beside it. The stamp is
// taken before compiling, so a source saved during the build also counts as newer.
// `--if-stale` (the test command): skip when dist/'s stamp already matches src/.
// `--if-possible` (npm's prepare step): skip, with a note, where TypeScript is not
// installed (a production install of the checkout); the start-up check still guards.
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

import { STAMP_FILE, sourceStamp } from "../src/build-stamp.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = fileURLToPath(new URL("../dist", import.meta.url));
const scratch = `${dist}.build-${process.pid}`;
const old = `${dist}.old-${process.pid}`;
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
if (process.argv.includes("--if-possible") && !existsSync(tsc)) {
  console.log("build: typescript is not installed; dist/ not built (`npm run build` after installing the devDependencies)");
  process.exit(0);
}
const stamp = sourceStamp(fileURLToPath(new URL("../src", import.meta.url)));
if (process.argv.includes("--if-stale")) {
  let built;
  try {
    built = JSON.parse(readFileSync(join(dist, STAMP_FILE), "utf8")).src;
  } catch {
    built = undefined;
  }
  if (built === stamp) {
    console.log("build: dist/ is up to date with src/");
    process.exit(0);
  }
}
rmSync(scratch, { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", scratch], { cwd: root, stdio: "inherit" });
if (r.status !== 0) {
  rmSync(scratch, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}
// Everything that is not source code keeps its place under dist/.
const isCode = (path) => /\.(m?ts|tsx|mjs)$/.test(path);
cpSync(new URL("../src/", import.meta.url), scratch, { recursive: true, filter: (src) => !isCode(src) });
writeFileSync(join(scratch, STAMP_FILE), `${JSON.stringify({ src: stamp })}\n`);
try {
  renameSync(dist, old);
} catch (e) {
  if (e.code !== "ENOENT") throw e;
}
renameSync(scratch, dist);
rmSync(old, { recursive: true, force: true });
