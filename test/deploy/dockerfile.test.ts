// The Dockerfile and .dockerignore: port, health check and environment agree with
// src/config.ts; the default image holds built JavaScript and production dependencies
// only (no TypeScript loader, one model, one onnxruntime-web build), yet everything the
// service imports at run time is among them; onnxruntime-node only in the opt-in native
// target; the model check script really fails on a bad model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPglite } from "../../src/db/pglite-db.ts";
import { checkEnv } from "./support/config-checks.ts";
import { dockerEnv, readDockerfile, readText, REPO, resolvedStage, stageName } from "./support/deploy-files.ts";
import { DEFAULT_MODEL, DEFAULT_MODEL_FILE } from "../support/default-model.ts";

const { stages } = readDockerfile();
const named = (name: string) => {
  const i = stages.findIndex((s) => stageName(s) === name);
  assert.ok(i >= 0, `no stage named ${name}`);
  return resolvedStage(stages, i);
};
/** What a plain `docker build .` produces: the last stage with what it inherits. */
const image = resolvedStage(stages, stages.length - 1);
const build = named("build");
const deps = named("deps");
const native = named("native");
const args = (stage: typeof image, op: string) => stage.filter((i) => i.op === op).map((i) => i.args);
const pkg = JSON.parse(readText(join(REPO, "package.json")));
/** The C library's settings in the image's ENV: the process's, not src/config.ts's (Dockerfile). */
const LIBC_ENV = { MALLOC_MMAP_THRESHOLD_: "1048576" };
/** The image's ENV as the service reads it. */
const serviceEnv = (stage: typeof image) =>
  Object.fromEntries(Object.entries(dockerEnv(stage)).filter(([k]) => !(k in LIBC_ENV)));

test("build and deps stages feed the service; the default target is the service, native and gpu are opt-in", () => {
  assert.deepEqual(
    stages.map(stageName).filter(Boolean),
    ["build", "deps", "service", "native-files", "native", "gpu-files", "gpu-deps", "gpu", "gpu-software-check"],
  );
  assert.match(stages.at(-1)![0]!.args, /^service$/i, "the last stage (the default target) is FROM service");
  assert.equal(stages.at(-1)!.length, 1, "and adds nothing to it");
});

test("the image's ENV, EXPOSE and HEALTHCHECK agree with src/config.ts", () => {
  for (const [where, stage] of [["image", image], ["native", native]] as const) {
    const { problems, config } = checkEnv(`Dockerfile ENV (${where})`, serviceEnv(stage));
    assert.deepEqual(problems, []);
    assert.deepEqual(args(stage, "EXPOSE"), [String(config!.PORT)]);
  }
  const { config } = checkEnv("Dockerfile ENV", serviceEnv(image));
  assert.equal(config!.INFERENCE_BACKEND, "auto");
  assert.equal(checkEnv("native", serviceEnv(native)).config!.INFERENCE_BACKEND, "native");
  const [hc] = args(image, "HEALTHCHECK");
  assert.match(hc, /\/readyz'/);
  // The check follows PORT and falls back to the image's own default.
  const fallback = /process\.env\.PORT\|\|(\d+)/.exec(hc);
  assert.ok(fallback, hc);
  assert.equal(Number(fallback[1]), config!.PORT);
  assert.match(hc, /--start-period=\d+s/);
});

test("the service runs built JavaScript as a non-root user, with no TypeScript loader", () => {
  const user = args(image, "USER").at(-1);
  assert.ok(user && user !== "root" && user !== "0", `USER ${user}`);
  const cmd = JSON.parse(args(image, "CMD").at(-1)!) as string[];
  // One V8 platform thread: the TurboFan compiles it runs leave one malloc arena, not four;
  // gc() exposed, freeing buffers within the call, and large blocks unmapped when freed, so
  // a large job's memory goes back as it is answered (Dockerfile).
  assert.deepEqual(cmd, ["node", "--v8-pool-size=1", "--expose-gc", "--no-concurrent-array-buffer-sweeping", "dist/main.js"]);
  for (const [k, v] of Object.entries(LIBC_ENV)) assert.equal(dockerEnv(image)[k], v, k);
  assert.equal(args(image, "ENTRYPOINT").length, 0);
  assert.ok(!/tsx|--import|--loader|--experimental/.test(JSON.stringify(dockerEnv(image))), "no loader through NODE_OPTIONS");
  // tsx (and with it esbuild) is the development loop's, so --omit=dev leaves it out.
  assert.ok(!pkg.dependencies.tsx && pkg.devDependencies.tsx, "tsx is a devDependency");
  assert.ok(!pkg.dependencies.esbuild, "esbuild is not a dependency");
  assert.ok(args(build, "RUN").some((r) => r.includes("scripts/build.mjs")), "dist/ is built in the build stage");
  assert.ok(args(image, "COPY").some((c) => /^--from=build\s+\/app\/dist\s/.test(c)), "the image copies dist/ from the build stage");
  assert.ok(!args(image, "COPY").some((c) => /(^|\s)\.?\/?src\b/.test(c) || c.includes("tsconfig")), "no sources in the image");
});

test("production dependencies only: one install with --omit=dev, none in the image itself", () => {
  assert.ok(args(deps, "RUN").some((r) => /npm ci\b.*--omit=dev/.test(r)), "npm ci --omit=dev in the deps stage");
  assert.ok(!args(image, "RUN").some((r) => /npm (ci|install)/.test(r)), "no install in the image stage");
  const copies = args(image, "COPY");
  const modules = copies.filter((c) => /node_modules/.test(c));
  assert.deepEqual(modules, ["--from=deps /app/node_modules ./node_modules"], "node_modules comes from the deps stage only");
  // What --omit=dev leaves out: the data package (models/ is assembled instead), tsx,
  // and onnxruntime-node (the native target adds it).
  for (const p of ["@imgly/background-removal-data", "tsx", "onnxruntime-node"]) {
    assert.ok(!pkg.dependencies[p] && !pkg.optionalDependencies?.[p], `${p} is not a production dependency`);
    assert.ok(pkg.devDependencies[p], `${p} stays a devDependency for the repository`);
  }
});

test("one model unless configured, one onnxruntime-web build, both sha256-checked at build time", () => {
  const arg = args(build, "ARG").find((a) => a.startsWith("MODELS="));
  assert.equal(arg, `MODELS=${DEFAULT_MODEL}`);
  const assemble = args(build, "RUN").find((r) => r.includes("assemble-models.mjs"))!;
  assert.match(assemble, /--models "\$MODELS"/);
  assert.match(assemble, /--runtimes wasm(\s|$)/);
  assert.ok(args(build, "RUN").some((r) => /deploy\/verify-models\.mjs \. "\$MODELS"/.test(r)));
  // Node loads ort.node.min.mjs and the plain build; the deps stage keeps nothing else.
  const prune = args(deps, "RUN").find((r) => r.includes("onnxruntime-web"))!;
  for (const keep of ["ort.node.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"]) assert.ok(prune.includes(keep), keep);
  assert.doesNotMatch(prune, /asyncify|jsep|jspi/);
  const link = args(image, "RUN").find((r) => r.includes("ln -s"))!;
  assert.match(link, /ort-wasm-simd-threaded\.mjs .*ort-wasm-simd-threaded\.wasm wasm\//);
});

test("CPU only; onnxruntime-node only in the native target, with this platform's binaries", () => {
  assert.equal(dockerEnv(build).ONNXRUNTIME_NODE_INSTALL, "skip");
  assert.match(readText(join(REPO, ".npmrc")), /onnxruntime-node-install=skip/);
  // The default image and the stages it is made of (the gpu target is test/deploy/gpu-image.test.ts).
  assert.ok(![...build, ...deps, ...image].some((i) => /cuda|nvidia|gpu/i.test(i.args)));
  assert.ok(!image.some((i) => i.args.includes("onnxruntime-node")), "the default image never names onnxruntime-node");
  assert.ok(native.some((i) => i.op === "COPY" && /--from=native-files \/out \/app\/node_modules\/onnxruntime-node$/.test(i.args)));
  const files = named("native-files").find((i) => i.op === "RUN" && i.args.includes("onnxruntime-node"))!.args;
  assert.match(files, /bin\/napi-v6\/linux\/\$arch/);
});

test("the image copies every runtime path and nothing it does not run", () => {
  const copied = args(image, "COPY").join("\n");
  for (const p of ["node_modules", "dist", "models", "package.json", "migrations", "wasm"]) {
    assert.ok(new RegExp(`(^|\\s|/)${p}(\\s|$|/)`, "m").test(copied), `${p} not copied`);
  }
  for (const p of ["src", "bin", "scripts", "tsconfig.json", "test", "bench"]) {
    assert.ok(!new RegExp(`(^|\\s)\\.?/?${p}(\\s|$|/)`, "m").test(args(image, "COPY").map((c) => c.split(/\s+/).slice(0, -1).join(" ")).join("\n")), `${p} copied`);
  }
});

/** Package names imported (at run time, not `import type`) by the files under src/. */
function runtimeImports(dir: string, out = new Set<string>()): Set<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) runtimeImports(path, out);
    else if (/\.(ts|tsx|mjs)$/.test(e.name)) {
      const text = readFileSync(path, "utf8");
      const specs = [
        ...text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gms),
        ...text.matchAll(/^\s*import\s+"([^"]+)"/gm),
        ...text.matchAll(/import\(\s*"([^"]+)"\s*\)/g),
      ].map((m) => m[1]);
      for (const s of specs) {
        if (s.startsWith(".") || s.startsWith("node:")) continue;
        out.add(s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]);
      }
    }
  }
  return out;
}

test("every package src/ imports at run time is a production dependency", () => {
  const prod = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]);
  const imported = runtimeImports(join(REPO, "src"));
  assert.ok(imported.has("hono") && imported.has("onnxruntime-web"), [...imported].join(", "));
  // tsx only for TypeScript entries (the development loop), never from dist/.
  assert.deepEqual([...imported].filter((p) => !prod.has(p) && p !== "tsx").sort(), []);
  // The optional peers are reached by name at run time, with an error that says to install them.
  for (const peer of ["onnxruntime-node", "@imgly/background-removal-data"]) {
    assert.equal(pkg.peerDependenciesMeta?.[peer]?.optional, true, `${peer} is an optional peer dependency`);
    assert.equal(pkg.peerDependencies[peer], pkg.devDependencies[peer], `${peer}: one version range`);
  }
});

test("the image starts on an initialised, migrated embedded database where the service opens it", () => {
  assert.ok(args(build, "RUN").some((r) => r === "node deploy/init-data.mjs /data-template"));
  assert.ok(args(image, "COPY").includes("--from=build --chown=node:node /data-template /data"));
  assert.equal(dockerEnv(image).DATA_DIR, "/data");
  // init-data.mjs writes <dir>/pglite: the folder src/wiring/services.ts opens inside DATA_DIR.
  assert.match(readText(join(REPO, "src/wiring/services.ts")), /join\(config\.DATA_DIR, "pglite"\)/);
  assert.match(readText(join(REPO, "deploy/init-data.mjs")), /join\(resolve\(dataDir\), "pglite"\)/);
});

test("init-data migrates a fresh data directory and writes no secret into it", { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "pd-init-data-"));
  try {
    const r = spawnSync(process.execPath, [join(REPO, "deploy/init-data.mjs"), dir], { encoding: "utf8", timeout: 170_000 });
    assert.equal(r.status, 0, r.stderr);
    const migrations = readdirSync(join(REPO, "migrations")).filter((f) => f.endsWith(".sql"));
    assert.match(r.stdout, new RegExp(`${migrations.length} migrations applied`));
    const db = await openPglite(join(dir, "pglite"));
    try {
      const rows = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM schema_migrations");
      assert.equal(rows[0]!.n, migrations.length);
      // The key pepper is made on the service's first start, in the container.
      assert.deepEqual(await db.query("SELECT key FROM settings"), []);
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(".dockerignore keeps local state, secrets and the git history out of the build context", () => {
  const lines = readText(join(REPO, ".dockerignore")).split("\n").map((l) => l.trim());
  for (const p of ["node_modules", "data", "test-results", ".git", "**/.env", "dist", "models/*.onnx"]) assert.ok(lines.includes(p), p);
});

test("verify-models passes on the assembled models and fails on a changed one", () => {
  const script = join(REPO, "deploy/verify-models.mjs");
  const ok = spawnSync(process.execPath, [script, REPO], { encoding: "utf8" });
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(ok.stdout.includes(`${DEFAULT_MODEL_FILE} ok`), ok.stdout);

  const dir = mkdtempSync(join(tmpdir(), "pd-verify-"));
  try {
    mkdirSync(join(dir, "models"));
    const bytes = Buffer.from("not really a model");
    const manifest = { models: { tiny: { file: "tiny.onnx", bytes: bytes.length, sha256: "0".repeat(64) } } };
    writeFileSync(join(dir, "models/manifest.json"), JSON.stringify(manifest));
    writeFileSync(join(dir, "models/tiny.onnx"), bytes);
    const bad = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /tiny\.onnx sha256 [0-9a-f]{64}, manifest says 0{64}/);
    rmSync(join(dir, "models/tiny.onnx"));
    // Named models: only those are checked, and an unknown name is a failure.
    writeFileSync(join(dir, "models/manifest.json"), JSON.stringify({ models: { ...manifest.models, other: { file: "other.onnx", bytes: 1, sha256: "0".repeat(64) } } }));
    const onlyTiny = spawnSync(process.execPath, [script, dir, "tiny"], { encoding: "utf8" });
    assert.equal(onlyTiny.status, 1);
    assert.doesNotMatch(onlyTiny.stderr, /other\.onnx/);
    const unknown = spawnSync(process.execPath, [script, REPO, "small,huge"], { encoding: "utf8" });
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /huge: not in models\/manifest\.json/);
    const named = spawnSync(process.execPath, [script, REPO, "small"], { encoding: "utf8" });
    assert.equal(named.status, 0, named.stderr);
    assert.doesNotMatch(named.stdout, /isnet-medium/);
    const missing = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /tiny\.onnx is missing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the deployment files ask for a model the image carries", () => {
  const carried = args(build, "ARG").find((a) => a.startsWith("MODELS="))!.slice("MODELS=".length).split(",");
  for (const file of ["deploy/compose.yaml", "deploy/k8s/configmap.yaml"]) {
    const asked = [...readText(join(REPO, file)).matchAll(/^\s*MODEL:\s*"?([^"\s#]+)/gm)].map((m) => m[1]!);
    assert.ok(asked.length > 0, `${file} sets MODEL`);
    for (const m of asked) assert.ok(carried.includes(m), `${file} asks for MODEL=${m}; the image carries ${carried.join(", ")}`);
  }
});
