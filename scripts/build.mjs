// `npm run build`: src/ to dist/ (JavaScript + declarations) with the emit settings of
// tsconfig.build.json, plus the non-code files the modules read beside themselves (the
// console's pictures). A fresh dist/ every time, so a deleted source never lingers in the
// package. Run by prepack (npm pack / publish) and by scripts/run-tests.mjs, since the
// tests import the package by its name, which resolves into dist/.
import { cpSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = new URL("../dist/", import.meta.url);
rmSync(dist, { recursive: true, force: true });
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
if (r.status !== 0) process.exit(r.status ?? 1);
// Everything that is not source code keeps its place under dist/.
const isCode = (path) => /\.(m?ts|tsx|mjs)$/.test(path);
cpSync(new URL("../src/", import.meta.url), dist, { recursive: true, filter: (src) => !isCode(src) });
