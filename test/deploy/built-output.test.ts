// The shipped ways to run Pixeldrop run the JavaScript built into dist/: the CLI from the
// checkout and `npm start` load no TypeScript loader (tsx, esbuild) and no .ts file, in
// the main thread or in any worker thread (test/deploy/no-tsx/ makes such an import throw
// and lists every module resolved). A dist/ older than the src/ beside it refuses to run.
// The installed CLI is run from the package's files laid out as npm installs them (no
// src/ beside dist/); test/library/pack.test.ts installs the real tarball. The library
// under vitest and Deno imports dist/ too (test/vitest, test/deno).
//
// scripts/run-tests.mjs builds dist/ just before the tests, but in a checkout where work
// goes on, src/ may change during the run: the children here skip the freshness check on
// purpose (PIXELDROP_ALLOW_STALE_DIST=1), and the last test checks the check itself.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../support/free-port.ts";
import { writeTinyModel } from "../support/tiny-onnx.ts";
import { DEFAULT_MODEL_FILE } from "../support/default-model.ts";

// Plain JavaScript without declarations (it runs before anything is compiled).
const stampModule: string = "../../src/build-stamp.mjs";
const { STAMP_FILE, sourceStamp } = (await import(stampModule)) as { STAMP_FILE: string; sourceStamp(dir: string): string };

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const HOOKS = new URL("./no-tsx/register.mjs", import.meta.url).href;
const work = mkdtempSync(join(tmpdir(), "pd-built-"));
after(() => rmSync(work, { recursive: true, force: true }));

function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PIXELDROP_ALLOW_STALE_DIST: "1" };
  // The test runner's own loader must not leak into the children.
  delete env.NODE_OPTIONS;
  return env;
}

/** What the hooks logged: every resolved module URL, and FORBIDDEN lines. */
function modulesLogged(log: string): string[] {
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
}

function assertNoLoader(lines: string[], mustInclude: string[]) {
  const forbidden = lines.filter((l) => l.startsWith("FORBIDDEN"));
  assert.deepEqual(forbidden, [], "a run-time import reached a TypeScript loader or a .ts file");
  const fromSrc = lines.filter((l) => l.startsWith(`file://${REPO}src/`));
  assert.deepEqual(fromSrc, [], "modules loaded from src/ instead of dist/");
  for (const m of mustInclude) assert.ok(lines.some((l) => l.endsWith(m)), `${m} was not loaded (the hooks saw ${lines.length} modules)`);
}

test("the CLI from the checkout (bin/pixeldrop.mjs) runs dist/, workers included, with no TypeScript loader", { timeout: 300_000 }, () => {
  const log = join(work, "cli-modules.log");
  const out = join(work, "cli-out");
  // The tiny model of IS-Net's shape by path: what loads is the question here, and the
  // installed CLI below runs the real one. Two files: a batch runs in the worker pool (a
  // single file runs in the CLI's own thread, as below).
  const tiny = writeTinyModel();
  after(() => tiny.remove());
  const r = spawnSync(
    process.execPath,
    ["--import", HOOKS, "bin/pixeldrop.mjs", "remove", "test/fixtures/photos/chelsea.png", "test/fixtures/photos/astronaut.png", "-o", out, "--size", "preview", "--backend", "wasm", "--threads", "1", "--model", tiny.path],
    { cwd: REPO, env: { ...baseEnv(), NO_TSX_LOG: log }, encoding: "utf8", timeout: 280_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(join(out, "chelsea.png")) && existsSync(join(out, "astronaut.png")), r.stderr);
  assertNoLoader(modulesLogged(log), ["/dist/cli/main.js", "/dist/engine/pipeline/pipeline-worker.js", "/dist/engine/inference/backend-ort-web.js"]);
});

test("the installed CLI (the package's files in node_modules/pixeldrop, no src/) runs with no TypeScript loader", { timeout: 300_000 }, () => {
  // The package as the tarball lays it out, its dependencies beside it as hoisted by npm.
  const project = join(work, "installed");
  const modules = join(project, "node_modules");
  const pkg = join(modules, "pixeldrop");
  mkdirSync(join(pkg, "models"), { recursive: true });
  for (const name of readdirSync(join(REPO, "node_modules"))) {
    if (!name.startsWith(".")) symlinkSync(join(REPO, "node_modules", name), join(modules, name));
  }
  for (const dir of ["dist", "bin"]) cpSync(join(REPO, dir), join(pkg, dir), { recursive: true });
  copyFileSync(join(REPO, "package.json"), join(pkg, "package.json"));
  copyFileSync(join(REPO, "models/manifest.json"), join(pkg, "models/manifest.json"));
  symlinkSync(join(REPO, `models/${DEFAULT_MODEL_FILE}`), join(pkg, `models/${DEFAULT_MODEL_FILE}`));
  const log = join(work, "installed-modules.log");
  const env: NodeJS.ProcessEnv = { ...baseEnv(), NO_TSX_LOG: log };
  delete env.PIXELDROP_ALLOW_STALE_DIST; // nothing to compare: no src/ in a package
  const r = spawnSync(
    process.execPath,
    ["--import", HOOKS, "node_modules/pixeldrop/bin/pixeldrop.mjs", "remove", join(REPO, "test/fixtures/photos/chelsea.png"), "-o", "out", "--size", "preview", "--backend", "wasm", "--threads", "1"],
    { cwd: project, env, encoding: "utf8", timeout: 280_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(join(project, "out", "chelsea.png")), r.stderr);
  const lines = modulesLogged(log);
  // One file: the CLI runs it in its own thread (src/cli/local-remover.ts).
  assertNoLoader(lines, ["/node_modules/pixeldrop/dist/cli/main.js", "/node_modules/pixeldrop/dist/engine/pipeline/inline-engine.js", "/node_modules/pixeldrop/dist/engine/inference/backend-ort-web.js"]);
});


test("npm start serves from dist/ with no TypeScript loader, pool workers included", { timeout: 240_000 }, async () => {
  const log = join(work, "start-modules.log");
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    // npm passes NODE_OPTIONS to the node it starts: the hooks sit in the service's process.
    NODE_OPTIONS: `--import=${HOOKS}`,
    NO_TSX_LOG: log,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: join(work, "data"),
    OPERATOR_TOKEN: "pdop_built_output_test_token_0000000000",
    INFERENCE_BACKEND: "stub",
    POOL_SIZE: "1",
    LOG_LEVEL: "warn",
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const child = spawn("npm", ["start", "--silent"], { cwd: REPO, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    let ready = false;
    const until = Date.now() + 200_000;
    while (!ready && Date.now() < until && child.exitCode === null) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (res) => res.ok,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(ready, `the service did not become ready:\n${output}`);
  } finally {
    try {
      process.kill(-child.pid!, "SIGTERM"); // npm, its shell and the service
    } catch {
      /* already gone */
    }
    await exited;
  }
  assertNoLoader(modulesLogged(log), ["/dist/main.js", "/dist/engine/pipeline/pipeline-worker.js"]);
});

test("a dist/ older than the src/ beside it refuses to run, and says how to fix it", () => {
  const pkg = join(work, "pkg");
  mkdirSync(join(pkg, "src", "cli"), { recursive: true });
  mkdirSync(join(pkg, "dist"), { recursive: true });
  for (const f of ["build-stamp.mjs", "require-fresh-dist.mjs"]) copyFileSync(join(REPO, "src", f), join(pkg, "dist", f));
  writeFileSync(join(pkg, "src", "cli", "main.ts"), "export const a = 1;\n");
  const run = (env: NodeJS.ProcessEnv = {}) => {
    const e = { ...process.env, ...env };
    if (!("PIXELDROP_ALLOW_STALE_DIST" in env)) delete e.PIXELDROP_ALLOW_STALE_DIST;
    return spawnSync(process.execPath, [join(pkg, "dist", "require-fresh-dist.mjs")], { env: e, encoding: "utf8" });
  };

  let r = run();
  assert.equal(r.status, 1, "no stamp: refused");
  assert.match(r.stderr, /no build stamp.*npm run build/);

  writeFileSync(join(pkg, "dist", STAMP_FILE), JSON.stringify({ src: sourceStamp(join(pkg, "src")) }));
  r = run();
  assert.equal(r.status, 0, r.stderr);

  writeFileSync(join(pkg, "src", "cli", "main.ts"), "export const a = 2; // edited\n");
  r = run();
  assert.equal(r.status, 1, "an edited source: refused");
  assert.match(r.stderr, /older than .*src.*npm run build/);

  // A new file counts too, and the deliberate override lets it run.
  writeFileSync(join(pkg, "src", "cli", "main.ts"), "export const a = 1;\n");
  writeFileSync(join(pkg, "src", "extra.ts"), "");
  assert.equal(run().status, 1, "a new source file: refused");
  assert.equal(run({ PIXELDROP_ALLOW_STALE_DIST: "1" }).status, 0);

  // Without a src/ beside it (an installed package, an image) there is nothing to compare.
  rmSync(join(pkg, "src"), { recursive: true });
  assert.equal(run().status, 0);
});
