// A stranger's install: `npm pack` this repository, install the tarball into an empty
// project with install scripts disabled (npm may block a dependency's scripts), and cut
// out a photo from a plain .mjs script, in Node (no tsx, no loader) and in Deno (the
// package.json bare specifier, node_modules/ managed by npm; a tiny model passed by
// path, since the carried model's cut-outs are shown in Node). The default model comes in
// the tarball, so neither the model data package nor onnxruntime-node nor the development
// loop's tsx/esbuild is installed; the onnxruntime-web runtime is copied on first use.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeTinyModel } from "../support/tiny-onnx.ts";
import { DEFAULT_MODEL_FILE } from "../support/default-model.ts";

// Plain JavaScript without declarations (it runs before anything is compiled).
const stampModule: string = "../../src/build-stamp.mjs";
const { staleDistReason } = (await import(stampModule)) as { staleDistReason(dist: URL, env: object): string | undefined };

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const DENO = join(REPO, "node_modules", ".bin", "deno");
const work = mkdtempSync(join(tmpdir(), "pd-pack-"));
after(() => rmSync(work, { recursive: true, force: true }));

const CUT_SCRIPT = `import { readFileSync, writeFileSync } from "node:fs";
import { removeBackground } from "pixeldrop";
const model = process.argv[3]; // a model file of the caller's own, when given
const cut = await removeBackground(readFileSync(process.argv[2] ?? "photo.png"), { size: "preview", backend: "wasm", ...(model ? { model } : {}) });
writeFileSync("cutout.png", cut.png);
console.log(JSON.stringify({ width: cut.width, height: cut.height, bytes: cut.png.length }));
`;

function sh(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 });
}

let tarball = "";
let project = "";

test("npm pack ships the built library, the licence files and the manifest, and nothing of the repo's own", () => {
  // npm runs prepare (assemble) and prepack (build) first; their lines precede the JSON.
  // The test command has just built dist/ (npm pack's prepack would build it twice more,
  // with prepare): pack that build, once its stamp shows it matches src/.
  assert.equal(staleDistReason(new URL("../../dist", import.meta.url), {}), undefined);
  const out = sh("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], REPO);
  const [packed] = JSON.parse(out.slice(out.indexOf("[\n"))) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  const paths = packed!.files.map((f) => f.path);
  for (const must of ["dist/index.js", "dist/index.d.ts", "dist/engine/inference/worker-bootstrap.mjs", "dist/engine/pipeline/pipeline-worker.js", "dist/engine/pipeline/pipeline-bands-worker.js", "models/manifest.json", `models/${DEFAULT_MODEL_FILE}`, "models/background-removal-data.LICENSE.md", "LICENSE", "NOTICE", "package.json", "bin/pixeldrop.mjs"]) {
    assert.ok(paths.includes(must), `the tarball lacks ${must}`);
  }
  // One model (the default); the other is built from the data package, installed on request.
  const strays = paths.filter((p) => /^(test|docs|deploy|\.ci|src|bench|scripts)\//.test(p) || (p.endsWith(".onnx") && p !== `models/${DEFAULT_MODEL_FILE}`) || p.startsWith("node_modules/") || /^wasm\/.*\.(wasm|mjs)$/.test(p));
  assert.deepEqual(strays, []);
});

test("installed into an empty project without install scripts, a plain Node .mjs cuts out a photo", { timeout: 600_000 }, () => {
  assert.ok(tarball, "the pack test ran first");
  project = join(work, "consumer");
  sh("mkdir", ["-p", project], work);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  sh("npm", ["install", tarball, "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], project);
  writeFileSync(join(project, "cut.mjs"), CUT_SCRIPT);
  copyFileSync(join(REPO, "test/fixtures/photos/chelsea.png"), join(project, "photo.png"));
  // Only what the library needs: no model data package, no native runtime, no TypeScript loader.
  for (const heavy of ["@imgly/background-removal-data", "onnxruntime-node", "tsx", "esbuild"]) {
    assert.equal(existsSync(join(project, "node_modules", heavy)), false, `${heavy} was installed`);
  }
  assert.ok(existsSync(join(project, `node_modules/pixeldrop/models/${DEFAULT_MODEL_FILE}`)), "the default model comes in the tarball");
  const installedMb = Number(sh("du", ["-sm", "node_modules"], project).split("\t")[0]);

  const r = spawnSync(process.execPath, ["cut.mjs"], { cwd: project, encoding: "utf8", timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split("\n").pop()!).width, 451);
  const png = readFileSync(join(project, "cutout.png"));
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
  assert.ok(existsSync(join(project, "node_modules/pixeldrop/wasm/ort-wasm-simd-threaded.wasm")), "the runtime copied on first use");
  const mb = Number(sh("du", ["-sm", "node_modules"], project).split("\t")[0]);
  console.log(`consumer install (npm install pixeldrop): ${installedMb} MB installed, ${mb} MB after the first cut-out`);
});

test("Deno runs the same script against the npm-installed package (bare specifier, nodeModulesDir)", { skip: !existsSync(DENO) && "no deno devDependency", timeout: 600_000 }, () => {
  assert.ok(project, "the install test ran first");
  writeFileSync(join(project, "deno.json"), JSON.stringify({ nodeModulesDir: "manual" }));
  rmSync(join(project, "cutout.png"));
  // The tiny model of IS-Net's shape, passed by path: what this shows is Deno resolving and
  // running the installed package; the carried model's cut-outs are the tests around it.
  const tiny = writeTinyModel();
  const r = spawnSync(DENO, ["run", "-A", "cut.mjs", "photo.png", tiny.path], { cwd: project, encoding: "utf8", timeout: 300_000 });
  tiny.remove();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout.trim().split("\n").pop()!).height, 300);
  assert.ok(existsSync(join(project, "cutout.png")));
});

test("a read-only install used by another user cuts out with the model it carries; only the runtime goes to the cache", {
  skip: (process.getuid?.() !== 0 || spawnSync("setpriv", ["--version"]).status !== 0) && "needs root and setpriv to run as another user",
  timeout: 600_000,
}, () => {
  assert.ok(project, "the install test ran first");
  const pkgDir = join(project, "node_modules/pixeldrop");
  // As a system-wide install would be: owned by root, not writable, runtime not yet copied.
  for (const f of readdirSync(join(pkgDir, "wasm"))) if (/\.(wasm|mjs)$/.test(f)) rmSync(join(pkgDir, "wasm", f));
  sh("chmod", ["-R", "a-w", pkgDir], work);
  sh("chmod", ["755", work, project], work);
  const home = mkdtempSync(join(tmpdir(), "pd-pack-home-"));
  try {
    copyFileSync(join(REPO, "test/fixtures/photos/chelsea.png"), join(home, "photo.png"));
    sh("chown", ["-R", "65534:65534", home], work);
    const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "env", `HOME=${home}`, process.execPath, join(project, "cut.mjs")], {
      cwd: home,
      encoding: "utf8",
      timeout: 300_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout.trim().split("\n").pop()!).width, 451);
    const cached = sh("find", [join(home, ".cache/pixeldrop"), "-type", "f"], work).trim().split("\n").map((p) => p.split("/").pop()).sort();
    assert.deepEqual(cached, ["ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"], "the model is read from the package, not rebuilt");
  } finally {
    sh("chmod", ["-R", "u+w", pkgDir], work);
    rmSync(home, { recursive: true, force: true });
  }
});
