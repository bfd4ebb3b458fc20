// The test command (`npm test`). Runs every test file under test/ with Node's test runner,
// a few files of one folder to a process (scripts/test-plan.mjs says which share one),
// spread over parallel lanes with stores of their own (scripts/test-lanes.mjs); a full run adds the library's vitest suite (twice) and the
// Deno unit suite as jobs of the same lanes. The TypeScript is compiled once, before the
// jobs start, into the cache of scripts/ts-hooks/, whose module hooks each test process
// loads instead of tsx (a process starts with a fraction of tsx's CPU).
//
//   node scripts/run-tests.mjs                  everything (what CI runs)
//   node scripts/run-tests.mjs test/gateway …   these folders or files only
//   node scripts/run-tests.mjs --quick          the edit loop: no servers, no model (scripts/test-plan.mjs)
//   PD_TEST_LANES=1 node scripts/run-tests.mjs  one job at a time
//   PD_TEST_SHARE=0 node scripts/run-tests.mjs  every file in a process of its own
//   PD_TEST_CPU=1 node scripts/run-tests.mjs    adds each job's CPU seconds and the total
//                                               (all jobs: test-results/test-cpu.tsv)
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { laneStores, runLanes, runnerCounts } from "./test-lanes.mjs";
import { DEFAULT_LANES, isQuick, processes, runsAlone, runsRealModel } from "./test-plan.mjs";
import { precompile } from "./ts-hooks/precompile.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** With PD_TEST_CPU=1: each job's CPU and wall seconds and when it started, one a line. */
const CPU_LIST = "test-results/test-cpu.tsv";

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name === "fixtures" || name.startsWith(".")) continue;
      collect(join(path, name), out);
    }
  } else if (path.endsWith(".test.ts")) out.push(relative(ROOT, join(ROOT, path)));
  return out;
}

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const roots = args.filter((a) => !a.startsWith("--"));
const full = roots.length === 0 && !quick;
let files = (roots.length ? roots : ["test"]).flatMap((r) => collect(r, []));
if (quick) files = files.filter(isQuick);
const wantsVitest = full || roots.some((r) => r.startsWith("test/vitest"));
if (files.length === 0 && !wantsVitest) {
  console.error("no test files found");
  process.exit(1);
}

// The tests import the package by its name ("pixeldrop", "pixeldrop/client"), which
// resolves into dist/: build it first (unless its stamp says it matches src/), so a test
// never runs against stale output.
const build = spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
if (build.status !== 0) {
  console.error("build failed: not running the tests");
  process.exit(1);
}

// Every TypeScript file a test can load, compiled in one go (only what changed since the
// last run).
const compiled = await precompile(["src", "test", "bench", "scripts"].map((d) => join(ROOT, d)));
console.log(`ts-hooks: ${compiled.compiled} of ${compiled.files} TypeScript files compiled`);

const TS_HOOKS = new URL("./ts-hooks/register.mjs", import.meta.url).href;
const node = (label, argv, env) => ({ label, command: process.execPath, args: argv, cwd: ROOT, env });
// Jobs whose files never run the real model keep WebAssembly on V8's baseline compiler, in
// their own process and (through NODE_OPTIONS) every Node process they start: see the file.
const BASELINE_WASM = new URL("../test/support/wasm-baseline-only.mjs", import.meta.url).href;
const nodeOptions = [process.env.NODE_OPTIONS, `--import=${BASELINE_WASM}`].filter(Boolean).join(" ");
const wasmEnv = (files) => (files.some(runsRealModel) ? undefined : { NODE_OPTIONS: nodeOptions });
// A file alone is the process's main module, run by the test runner it imports (the spec
// reporter's closing counts are what runnerCounts reads). `node --test <file>` would put a
// second process in front of it for nothing: one file per job already isolates it. Files
// that share a process run one after the other inside it, each in a suite named after it
// (test/support/file-group.mjs).
const FILE_GROUP = "test/support/file-group.mjs";
const fileJob = (f) => node(f, ["--import", TS_HOOKS, "--test-reporter=spec", f], wasmEnv([f]));
const groupJob = (g) =>
  g.length === 1 ? fileJob(g[0]) : node(`${g.length} files: ${g.join(" ")}`, ["--import", TS_HOOKS, "--test-reporter=spec", FILE_GROUP, ...g], wasmEnv(g));
const jobs = processes(files.filter((f) => !runsAlone(f)), process.env.PD_TEST_SHARE !== "0").map(groupJob);
const aloneJobs = files.filter(runsAlone).map(fileJob);
// vitest twice: its default pool (child processes) and --pool=threads, where our inference
// workers live inside vitest's own worker threads.
const vitest = join(ROOT, "node_modules/vitest/vitest.mjs");
if (wantsVitest && existsSync(vitest)) {
  jobs.unshift(node("vitest (default pool)", [vitest, "run"]), node("vitest --pool=threads", [vitest, "run", "--pool=threads"]));
}
// The Deno unit suite (deno.json's "test" task) with the Deno binary the `deno`
// devDependency installs, when it is there.
const deno = join(ROOT, "node_modules/.bin/deno");
if (full && existsSync(deno)) jobs.unshift({ label: "deno task test", command: deno, args: ["task", "test"], cwd: ROOT });

// dist/ was built from src/ as it was a moment ago. Server processes started by the tests
// run it (test/support/server-process.ts); an edit to src/ made while the suite runs must
// not make them refuse to start.
const env = { ...process.env, FORCE_COLOR: "0", PIXELDROP_ALLOW_STALE_DIST: "1" };
if (quick) {
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
}
const lanes = Math.max(1, Math.min(Number(process.env.PD_TEST_LANES) || DEFAULT_LANES, Math.max(jobs.length, aloneJobs.length)));
const jobCount = jobs.length + aloneJobs.length;
const stores = await laneStores(lanes, env);
const started = performance.now();
console.log(`== ${files.length} test files in ${jobCount} jobs on ${lanes} lanes${aloneJobs.length ? `, then ${aloneJobs.length} on their own, side by side` : ""}${quick ? " (quick: no servers, no model)" : ""}`);

const totals = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
const failed = [];
const results = [];
const report = (result) => {
  const { job, status, output, seconds } = result;
  // When it ended, from the suite's start: with `seconds`, each lane's timeline.
  result.endedAt = (performance.now() - started) / 1000;
  results.push(result);
  const counts = runnerCounts(output);
  for (const k of Object.keys(totals)) totals[k] += counts[k] ?? 0;
  // A shared process's failures are named by file: each file's suite fails with its tests.
  if (status !== 0) {
    const files = [...new Set([...output.matchAll(/^✖ (test\/\S+\.test\.ts) /gm)].map((m) => m[1]))];
    failed.push(files.length && job.args.includes(FILE_GROUP) ? `${files.join(", ")} (in ${job.label})` : job.label);
  }
  const tally = counts.tests !== undefined ? ` · ${counts.pass} passed, ${counts.fail} failed, ${counts.skipped} skipped` : "";
  console.log(`\n── [${results.length}/${jobCount}] ${job.label} · ${seconds.toFixed(1)} s · ${status === 0 ? "ok" : `FAILED (exit ${status})`}${tally}`);
  console.log(output.trimEnd());
};
try {
  await runLanes(jobs, stores.envs, report);
  await runLanes(aloneJobs, stores.envs.slice(0, aloneJobs.length), report);
} finally {
  await stores.drop();
}

const wall = (performance.now() - started) / 1000;
console.log("\n== slowest jobs");
const cpu = (r) => (r.cpuSeconds === undefined ? "" : `  ${r.cpuSeconds.toFixed(1).padStart(6)} s CPU`);
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 12)) console.log(`${r.seconds.toFixed(1).padStart(7)} s${cpu(r)}  ${r.job.label}`);
const measured = results.filter((r) => r.cpuSeconds !== undefined);
if (measured.length) {
  console.log("\n== most CPU (PD_TEST_CPU=1)");
  for (const r of [...measured].sort((a, b) => b.cpuSeconds - a.cpuSeconds).slice(0, 25)) console.log(`${r.cpuSeconds.toFixed(1).padStart(7)} s CPU  ${r.job.label}`);
  console.log(`== CPU of all ${measured.length} jobs: ${measured.reduce((a, r) => a + r.cpuSeconds, 0).toFixed(0)} s`);
  // Every job's numbers, most CPU first, for comparing two runs file by file.
  mkdirSync(join(ROOT, "test-results"), { recursive: true });
  const rows = [...measured]
    .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
    .map((r) => `${r.cpuSeconds.toFixed(2)}\t${r.seconds.toFixed(1)}\t${(r.endedAt - r.seconds).toFixed(1)}\t${r.job.label}`);
  writeFileSync(join(ROOT, CPU_LIST), `cpu_s\twall_s\tstarted_s\tjob\n${rows.join("\n")}\n`);
  console.log(`== every job's CPU and wall seconds: ${CPU_LIST}`);
}
console.log(`\n== Node runner: ${totals.tests} tests, ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped, ${totals.cancelled} cancelled, ${totals.todo} todo`);
console.log(`== ${jobCount} jobs, ${failed.length} failed, ${wall.toFixed(0)} s wall on ${lanes} lanes`);
for (const label of failed) console.log(`FAILED: ${label}`);
process.exit(failed.length ? 1 : 0);
