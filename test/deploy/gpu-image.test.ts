// The Dockerfile's gpu target: the service on Deno (the npm devDependency's binary), on a
// Debian base without Node, with the Vulkan loader and libglvnd of
// deploy/gpu-library-packages.txt (the GPU bench carries the same list), the NVIDIA
// Container Toolkit's variables with the graphics capability, the default model's GPU
// form made at build time, and onnxruntime-web pruned to what Deno loads: checked here
// against src/config.ts, the bench script and the real package files. deploy/image-check.sh
// --gpu builds it and runs it on Mesa's software adapter (docs/DEPLOY.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { assembleAssets, ORT_RUNTIME_FILES } from "../../src/engine/assets/assemble.ts";
import { runtimesFor } from "../../src/engine/assets/locate.ts";
import { checkEnv } from "./support/config-checks.ts";
import { dockerEnv, readDockerfile, readText, REPO, resolvedStage, stageName } from "./support/deploy-files.ts";
import { DEFAULT_MODEL } from "../support/default-model.ts";

const { stages, preamble } = readDockerfile();
const named = (name: string) => {
  const i = stages.findIndex((s) => stageName(s) === name);
  assert.ok(i >= 0, `no stage named ${name}`);
  return resolvedStage(stages, i);
};
const gpu = named("gpu");
const files = named("gpu-files");
const args = (stage: typeof gpu, op: string) => stage.filter((i) => i.op === op).map((i) => i.args);
/** What the process reads from its environment besides src/config.ts: the C library, Deno, the NVIDIA Container Toolkit. */
const RUNTIME_ENV = ["MALLOC_MMAP_THRESHOLD_", "DENO_WEBGPU_BACKEND", "DENO_NO_UPDATE_CHECK", "DENO_NO_PROMPT", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"];

test("gpu runs the service on Deno, on a Debian base without Node, as uid 1000, and is never the default target", () => {
  assert.match(preamble.find((i) => i.op === "ARG" && i.args.startsWith("GPU_BASE_IMAGE="))?.args ?? "", /^GPU_BASE_IMAGE=debian:bookworm-slim$/);
  assert.equal(gpu[0]!.args, "${GPU_BASE_IMAGE} AS gpu");
  assert.deepEqual(JSON.parse(args(gpu, "CMD").at(-1)!), ["deno", "run", "-A", "--v8-flags=--expose-gc,--no-concurrent-array-buffer-sweeping", "dist/main.js"]);
  assert.ok(args(gpu, "COPY").includes("--from=gpu-files /out/bin/deno /usr/local/bin/deno"));
  // The binary is the npm devDependency's (its platform package), and the build runs it once.
  const made = args(files, "RUN").join("\n");
  assert.match(made, /require\.resolve\('@deno\/linux-' \+ process\.arch \+ '-glibc\/package\.json'\)/);
  assert.match(made, /\/out\/bin\/deno --version/);
  assert.equal(JSON.parse(readText(join(REPO, "package.json"))).devDependencies.deno, "2.9.5");
  const run = args(gpu, "RUN").join("\n");
  assert.match(run, /useradd --uid 1000 /);
  assert.equal(args(gpu, "USER").at(-1), "pixeldrop");
  assert.ok(!args(gpu, "RUN").some((r) => /\bnode\b/.test(r.replace(/node_modules/g, ""))), "no Node at run time");
  assert.match(stages.at(-1)![0]!.args, /^service$/i, "a plain build is still the CPU image");
});

test("its ENV is the service's plus Deno's and the NVIDIA Container Toolkit's, with the graphics capability", () => {
  const env = dockerEnv(gpu);
  const service = Object.fromEntries(Object.entries(env).filter(([k]) => !RUNTIME_ENV.includes(k)));
  const { problems, config } = checkEnv("Dockerfile ENV (gpu)", service);
  assert.deepEqual(problems, []);
  assert.equal(config!.INFERENCE_BACKEND, "auto", "auto: the GPU form on a GPU, WebAssembly elsewhere");
  assert.deepEqual(args(gpu, "EXPOSE"), [String(config!.PORT)]);
  assert.deepEqual(env.NVIDIA_DRIVER_CAPABILITIES?.split(",").sort(), ["compute", "graphics", "utility"]);
  assert.equal(env.NVIDIA_VISIBLE_DEVICES, "all");
  assert.equal(env.DENO_WEBGPU_BACKEND, "vulkan");
  assert.equal(env.MALLOC_MMAP_THRESHOLD_, dockerEnv(named("service")).MALLOC_MMAP_THRESHOLD_);
  const [hc] = args(gpu, "HEALTHCHECK");
  assert.match(hc!, /"deno", "eval"/);
  assert.match(hc!, /\/readyz/);
  assert.match(hc!, new RegExp(`Deno\\.env\\.get\\('PORT'\\) \\|\\| ${config!.PORT}\\)`));
});

test("the Vulkan loader and libglvnd come from one list, which the GPU bench carries too, unpacked without Mesa", () => {
  const list = readText(join(REPO, "deploy/gpu-library-packages.txt")).split("\n").filter((l) => l && !l.startsWith("#"));
  assert.deepEqual(list, ["libvulkan1", "libglvnd0", "libegl1", "libgl1", "libglx0", "libopengl0", "libgles2"]);
  const made = args(files, "RUN").join("\n");
  assert.match(made, /apt-get download \$\(grep -v '\^#' \/app\/deploy\/gpu-library-packages\.txt\)/);
  assert.match(made, /dpkg -x "\$deb" \/out\/root/);
  assert.match(made, /libvulkan\.so\.1 .*libGLdispatch\.so\.0/);
  assert.ok(args(gpu, "COPY").includes("--from=gpu-files /out/root/ /"));
  assert.match(args(gpu, "RUN").join("\n"), /^ldconfig /);
  assert.match(readText(join(REPO, "scripts/webgpu-bench-device.sh")), /GPU_LIBRARY_PACKAGES=\$\(grep -v '\^#' deploy\/gpu-library-packages\.txt/);
  // Mesa only in the check stage, which shows the image on a machine without a GPU.
  assert.ok(!gpu.some((i) => /mesa/i.test(i.args)));
  assert.match(args(named("gpu-software-check"), "RUN").join("\n"), /apt-get install .*mesa-vulkan-drivers/);
});

test("the default model and its GPU form are in the image, both checked by sha256 at build time", () => {
  const made = args(files, "RUN").join("\n");
  const gpuForm = `${DEFAULT_MODEL}-gpu`;
  const manifest = JSON.parse(readText(join(REPO, "models/manifest.json"))) as { models: Record<string, { file: string; gpuFormOf?: string }> };
  assert.equal(manifest.models[gpuForm]?.gpuFormOf, DEFAULT_MODEL);
  assert.match(made, new RegExp(`main\\(\\['assemble', '${gpuForm}'\\]\\)`));
  assert.match(made, new RegExp(`deploy/verify-models\\.mjs \\. ${gpuForm}`));
  assert.match(made, new RegExp(`mv models/${manifest.models[gpuForm]!.file} /out/models/`));
  const copies = args(gpu, "COPY");
  assert.ok(copies.includes("--from=build /app/models ./models") && copies.includes("--from=gpu-files /out/models/ ./models/"));
});

/** onnxruntime-web's files in the gpu image: those the service's deps stage keeps, and those gpu-deps adds. */
function keptForGpu(): string[] {
  const prune = named("deps").find((i) => i.op === "RUN" && i.args.includes("cd node_modules/onnxruntime-web"))!.args;
  const kept = [...prune.matchAll(/! -name '([^']+)'/g)].map((m) => m[1]!);
  const added = args(named("gpu-deps"), "COPY")
    .filter((c) => c.includes("onnxruntime-web"))
    .flatMap((c) => c.split(/\s+/).slice(1, -1))
    .map((p) => basename(p));
  return [...kept, ...added];
}

test("onnxruntime-web keeps what Deno loads: Node's entries, the plain build, the WebGPU bundle and the asyncify build", () => {
  assert.deepEqual(keptForGpu().sort(), [
    "ort-wasm-simd-threaded.asyncify.mjs",
    "ort-wasm-simd-threaded.asyncify.wasm",
    "ort-wasm-simd-threaded.mjs",
    "ort-wasm-simd-threaded.wasm",
    "ort.node.min.js",
    "ort.node.min.mjs",
    "ort.webgpu.bundle.min.mjs",
  ]);
  // Deno resolves "onnxruntime-web/webgpu" by the import condition's default.
  const exports = JSON.parse(readText(join(REPO, "node_modules/onnxruntime-web/package.json"))).exports;
  assert.equal(exports["./webgpu"].import.default, "./dist/ort.webgpu.bundle.min.mjs");
  const link = args(gpu, "RUN").find((r) => r.includes("ln -s"))!;
  for (const f of ORT_RUNTIME_FILES) assert.match(link, new RegExp(`dist/${f.replace(/\./g, "\\.")}(\\s|$)`), f);
});

test("with onnxruntime-web pruned as in the gpu image, auto under Deno (wasm and webgpu) finds every runtime file", async () => {
  const root = mkdtempSync(join(tmpdir(), "pd-gpu-runtimes-"));
  try {
    const ort = join(root, "node_modules", "onnxruntime-web");
    mkdirSync(join(ort, "dist"), { recursive: true });
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "app", version: "0.0.0", type: "module" }));
    copyFileSync(join(REPO, "node_modules/onnxruntime-web/package.json"), join(ort, "package.json"));
    for (const f of keptForGpu()) copyFileSync(join(REPO, "node_modules/onnxruntime-web/dist", f), join(ort, "dist", f));
    const wasmDir = join(root, "wasm");
    // What auto asks for where navigator.gpu exists (Deno): both builds.
    assert.equal(await assembleAssets({ anchor: root, manifest: { models: {} }, modelsDir: join(root, "models"), wasmDir, runtimes: ["wasm", "webgpu"] }), 4);
    assert.deepEqual(readdirSync(wasmDir).sort(), [...ORT_RUNTIME_FILES].sort());
    assert.deepEqual(runtimesFor("webgpu"), ["webgpu"]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
