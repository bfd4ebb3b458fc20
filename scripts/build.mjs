// `npm run build`: src/ to dist/ (JavaScript + declarations) with the emit settings of
// tsconfig.build.json. A fresh dist/ every time, so a deleted source never lingers in the
// package. Run by prepack (npm pack / publish) and by scripts/run-tests.mjs, since the
// tests import the package by its name, which resolves into dist/.
import { rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
process.exit(r.status ?? 1);
