// The Dockerfile and .dockerignore: port, health check and environment agree with
// src/config.ts; the final stage holds production dependencies only, yet everything
// the service imports at run time is among them; the model check script really fails
// on a bad model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkEnv } from "./support/config-checks.ts";
import { dockerEnv, readDockerfile, readText, REPO } from "./support/deploy-files.ts";

const { stages } = readDockerfile();
const final = stages.at(-1)!;
const build = stages[0];
const args = (stage: typeof final, op: string) => stage.filter((i) => i.op === op).map((i) => i.args);
const pkg = JSON.parse(readText(join(REPO, "package.json")));

test("the Dockerfile has a build stage and a final stage", () => {
  assert.equal(stages.length, 2);
  assert.match(build[0].args, /\bAS build$/);
});

test("the final stage's ENV, EXPOSE and HEALTHCHECK agree with src/config.ts", () => {
  const env = dockerEnv(final);
  const { problems, config } = checkEnv("Dockerfile ENV", env);
  assert.deepEqual(problems, []);
  assert.deepEqual(args(final, "EXPOSE"), [String(config!.PORT)]);
  const [hc] = args(final, "HEALTHCHECK");
  assert.match(hc, /\/readyz'/);
  // The check follows PORT and falls back to the image's own default.
  const fallback = /process\.env\.PORT\|\|(\d+)/.exec(hc);
  assert.ok(fallback, hc);
  assert.equal(Number(fallback[1]), config!.PORT);
  assert.match(hc, /--start-period=\d+s/);
});

test("the service runs as a non-root user from production dependencies only", () => {
  const user = args(final, "USER").at(-1);
  assert.ok(user && user !== "root" && user !== "0", `USER ${user}`);
  assert.ok(args(build, "RUN").some((r) => /npm ci\b.*--omit=dev/.test(r)), "npm ci --omit=dev in the build stage");
  assert.ok(!args(final, "RUN").some((r) => /npm (ci|install)/.test(r)), "no second install in the final stage");
  const cmd = JSON.parse(args(final, "CMD")[0]) as string[];
  assert.deepEqual(cmd, ["node", "--import", "tsx", "src/main.ts"]);
  // tsx runs the service, so it must survive --omit=dev.
  assert.ok(pkg.dependencies.tsx, "tsx is a runtime dependency");
});

test("CPU only, and the model is verified by sha256 at build time", () => {
  assert.equal(dockerEnv(build).ONNXRUNTIME_NODE_INSTALL, "skip");
  assert.match(readText(join(REPO, ".npmrc")), /onnxruntime-node-install=skip/);
  assert.ok(args(build, "RUN").some((r) => r.includes("deploy/verify-models.mjs")));
  assert.ok(!/cuda|nvidia|gpu/i.test(args(build, "FROM").concat(args(final, "FROM")).join(" ")));
});

test("the final stage copies every runtime path, including tsconfig.json for tsx's JSX settings", () => {
  const copied = args(final, "COPY").join("\n");
  for (const p of ["node_modules", "models", "wasm", "package.json", "tsconfig.json", "src", "migrations"]) {
    assert.ok(new RegExp(`(^|\\s|/)${p}(\\s|$|/)`, "m").test(copied), `${p} not copied`);
  }
  // The console's .tsx pages get hono/jsx from tsconfig.json, not from a pragma.
  assert.equal(JSON.parse(readText(join(REPO, "tsconfig.json"))).compilerOptions.jsxImportSource, "hono/jsx");
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
  assert.ok(imported.has("hono") && imported.has("tsx"), [...imported].join(", "));
  assert.deepEqual([...imported].filter((p) => !prod.has(p)).sort(), []);
});

test(".dockerignore keeps local state, secrets and the git history out of the build context", () => {
  const lines = readText(join(REPO, ".dockerignore")).split("\n").map((l) => l.trim());
  for (const p of ["node_modules", "data", "test-results", ".git", "**/.env"]) assert.ok(lines.includes(p), p);
});

test("verify-models passes on the assembled models and fails on a changed one", () => {
  const script = join(REPO, "deploy/verify-models.mjs");
  const ok = spawnSync(process.execPath, [script, REPO], { encoding: "utf8" });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /isnet-small\.onnx ok/);

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
    const missing = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /tiny\.onnx is missing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
