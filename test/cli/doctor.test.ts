// `pixeldrop doctor`: the GPU diagnosis as human lines or JSON, exit 0 unless a GPU is
// present and unusable. The checkout's own command under Node and under Deno (Mesa's
// software adapter where it is installed; without one Deno offers none, also no error).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../../src/cli/main.ts";
import { doctorCommand } from "../../src/cli/doctor-command.ts";
import { diagnoseGpu } from "../../src/engine/inference/gpu-doctor.ts";
import { fakeHost, LIB, NVIDIA_ICD, NVIDIA_NODES, DEBIAN_LD_CONF } from "../support/fake-gpu-host.ts";

// Plain JavaScript without declarations (it runs before anything is compiled).
const stampModule: string = "../../src/build-stamp.mjs";
const { STAMP_FILE, sourceStamp } = (await import(stampModule)) as { STAMP_FILE: string; sourceStamp(dir: string): string };

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const DENO = join(REPO, "node_modules", ".bin", "deno");
const BIN = join(REPO, "bin", "pixeldrop.mjs");
const noDeno = !existsSync(DENO) && "no Deno binary: the deno devDependency is not installed";

/** Runs the command in process: its exit code, its output lines, its error lines. */
async function run(argv: string[], diagnose?: Parameters<typeof doctorCommand>[3]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = diagnose ? await doctorCommand(argv, (s) => out.push(s), (s) => err.push(s), diagnose) : await main(["doctor", ...argv], (s) => err.push(s), {}, (s) => out.push(s));
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("under Node: WebGPU needs Deno, said on stdout, exit 0", async () => {
  const r = await run([]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^pixeldrop doctor: WebGPU needs Deno \(this is node\)/);
  assert.match(r.out, /runtime {2}node 20\.|runtime {2}node \d+\./);
  assert.match(r.out, /devices {2}/);
  assert.match(r.out, /nothing is wrong for this runtime \(exit 0\)/);
  assert.equal(r.err, "");
});

test("--json: the diagnosis as one JSON document; a usage error exits 2", async () => {
  const r = await run(["--json"]);
  assert.equal(r.code, 0);
  const d = JSON.parse(r.out) as Record<string, unknown>;
  assert.equal(d.runtime, "node");
  assert.equal(d.verdict, "needs-deno");
  assert.ok(Array.isArray(d.devices) && Array.isArray(d.problems) && typeof d.summary === "string");
  const bad = await run(["--jsonx"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /usage: pixeldrop doctor \[--json\]/);
  assert.match((await run(["--help"])).out, /usage: pixeldrop doctor/);
});

test("a GPU present but unusable: what is missing, how to fix it, exit 1; a software adapter alone: exit 0", async () => {
  const files = { ...DEBIAN_LD_CONF, ...NVIDIA_NODES, [`${LIB}/libGLX_nvidia.so.0`]: "", "/usr/share/vulkan/icd.d/nvidia_icd.json": NVIDIA_ICD };
  const r = await run([], () => diagnoseGpu({ runtime: "deno", adapter: null, host: fakeHost({ files }) }));
  assert.equal(r.code, 1);
  assert.match(r.out, /^pixeldrop doctor: GPU present \(\/dev\/nvidia0\) but Deno offers no WebGPU adapter/);
  assert.match(r.out, /devices {2}\/dev\/nvidia-uvm, \/dev\/nvidia0, \/dev\/nvidiactl/);
  assert.match(r.out, /adapter {2}none offered/);
  assert.match(r.out, /missing {2}1\. The Vulkan loader \(libvulkan\.so\.1\) is missing: .*apt-get install libvulkan1/);
  assert.match(r.out, / {11}2\. libglvnd's libGLdispatch\.so\.0/);
  assert.match(r.out, /a GPU is present but unusable.*\(exit 1\)/);
  const json = await run(["--json"], () => diagnoseGpu({ runtime: "deno", adapter: null, host: fakeHost({ files }) }));
  assert.equal(json.code, 1);
  assert.equal((JSON.parse(json.out) as { problems: string[] }).problems.length, 2);

  const llvmpipe = { vendor: "65541", architecture: "", device: "0", description: "llvmpipe (LLVM 15.0.6, 256 bits)", software: true, features: [] };
  const soft = await run([], () => diagnoseGpu({ runtime: "deno", adapter: llvmpipe, host: fakeHost() }));
  assert.equal(soft.code, 0);
  assert.match(soft.out, /adapter {2}llvmpipe \(LLVM 15\.0\.6, 256 bits\), software \(a CPU rasteriser, not a GPU\) \(vendor 65541, device 0\)/);
  assert.match(soft.out, /note {5}.*Not an error/);
});

test("the checkout's bin/pixeldrop.mjs doctor: under Node it says WebGPU needs Deno", { timeout: 60_000 }, () => {
  const r = spawnSync(process.execPath, [BIN, "doctor"], { encoding: "utf8", timeout: 50_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /WebGPU needs Deno/);
});

test("the checkout's bin/pixeldrop.mjs doctor under Deno (deno run -A): the adapter Deno offers, exit 0 without a GPU", { skip: noDeno, timeout: 120_000 }, () => {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? "/tmp" };
  delete env.DENO_WEBGPU_BACKEND;
  const r = spawnSync(DENO, ["run", "-A", BIN, "doctor", "--json"], { cwd: REPO, encoding: "utf8", timeout: 110_000, env });
  assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
  const d = JSON.parse(r.stdout) as { runtime: string; verdict: string; gpuPresent: boolean; adapter?: { software: boolean } };
  assert.equal(d.runtime, "deno");
  // This machine: no GPU; Mesa's lavapipe where it is installed (CI), no adapter otherwise.
  if (!d.gpuPresent) assert.ok(d.verdict === "software-only" || d.verdict === "no-gpu", r.stdout);
  if (d.verdict === "software-only") assert.equal(d.adapter?.software, true);
});

test("a dist/ that Node stamped is fresh to Deno too, though Deno reads modification times in whole milliseconds", { skip: noDeno, timeout: 60_000 }, () => {
  // The checkout's `deno run -A bin/pixeldrop.mjs` runs the same freshness check as Node
  // (src/require-fresh-dist.mjs); an edited file's time has a fraction of a millisecond.
  const pkg = mkdtempSync(join(tmpdir(), "pd-doctor-stamp-"));
  try {
    mkdirSync(join(pkg, "src"));
    mkdirSync(join(pkg, "dist"));
    for (const f of ["build-stamp.mjs", "require-fresh-dist.mjs"]) copyFileSync(join(REPO, "src", f), join(pkg, "dist", f));
    writeFileSync(join(pkg, "src", "main.ts"), "export {};\n");
    utimesSync(join(pkg, "src", "main.ts"), 1_795_000_000.1234567, 1_795_000_000.1234567);
    writeFileSync(join(pkg, "dist", STAMP_FILE), JSON.stringify({ src: sourceStamp(join(pkg, "src")) }));
    const env = { ...process.env };
    delete env.PIXELDROP_ALLOW_STALE_DIST;
    const r = spawnSync(DENO, ["run", "-A", join(pkg, "dist", "require-fresh-dist.mjs")], { encoding: "utf8", env, timeout: 50_000 });
    assert.equal(r.status, 0, r.stderr);
  } finally {
    rmSync(pkg, { recursive: true, force: true });
  }
});
