// Bare model time: one 1024x1024 input through the ORT session, nothing else (no decode,
// resize or encode; pre/post-processing is timed separately). Each configuration runs in
// its own child process, because ORT-web fixes its thread count once per process and
// because a fresh process keeps one configuration's memory from skewing the next.
// Also compares fetching only the mask output with fetching all twelve IS-Net outputs.
//
// Usage: node --import tsx bench/inference-bare.ts [--runs 5] [--models <names>, default the default model,small,medium]
//          [--backends wasm,native] [--threads 1,2] [--no-fetch-compare]
// The numbers depend on what else the machine runs: the load average is printed with them.
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { outputToMask, rgbToNchw } from "../src/engine/inference/tensor.ts";
import { openBareSession } from "./bare-session.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";
import { median } from "./median.ts";

interface ChildConfig {
  model: string;
  backend: "wasm" | "native";
  threads: number;
  runs: number;
  fetchCompare: boolean;
}

interface ChildResult extends ChildConfig {
  createMs: number;
  warmMs: number;
  firstOnlyMs: number[];
  allOutputsMs?: number[];
  preMs: number;
  postMs: number;
  rssMB: number;
  load: [number, number];
}

const round = (x: number) => Math.round(x);

async function time<T>(fn: () => Promise<T> | T): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function child(cfg: ChildConfig): Promise<ChildResult> {
  const loadBefore = loadavg()[0]!;
  const createStart = performance.now();
  const bare = await openBareSession(cfg);
  const run = (fetchAll: boolean) => bare.run(fetchAll);
  const { model: m, rgb } = bare;
  const [h, w] = m.inputSize;
  const createMs = performance.now() - createStart;

  let output: ArrayLike<number> = [];
  const warmMs = await time(async () => (output = await run(false)));
  const firstOnlyMs: number[] = [];
  const allOutputsMs: number[] = [];
  // Interleaved, so a change in background load hits both variants alike.
  for (let i = 0; i < cfg.runs; i++) {
    firstOnlyMs.push(await time(() => run(false)));
    if (cfg.fetchCompare) allOutputsMs.push(await time(() => run(true)));
  }

  const pre: number[] = [];
  const post: number[] = [];
  for (let i = 0; i < 5; i++) {
    pre.push(await time(() => rgbToNchw(rgb, w, h, m.mean, m.std)));
    post.push(await time(() => outputToMask(output, m.postprocess)));
  }
  return {
    ...cfg,
    createMs,
    warmMs,
    firstOnlyMs,
    allOutputsMs: cfg.fetchCompare ? allOutputsMs : undefined,
    preMs: median(pre),
    postMs: median(post),
    rssMB: process.memoryUsage().rss / 2 ** 20,
    load: [loadBefore, loadavg()[0]!],
  };
}

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}

async function parent(): Promise<void> {
  const runs = Number(arg("runs", "5"));
  const models = arg("models", `${DEFAULT_MODEL},small,medium`).split(",");
  const backends = arg("backends", "wasm,native").split(",") as ChildConfig["backend"][];
  const threads = arg("threads", "1,2").split(",").map(Number);
  const maxThreads = Math.max(...threads);
  const fetchCompare = !process.argv.includes("--no-fetch-compare");
  const self = fileURLToPath(import.meta.url);
  const results: ChildResult[] = [];

  console.log(`inference-bare: ${runs} warm runs per configuration, 1024x1024 input, node ${process.version}`);
  console.log("model   backend threads | median   min    max  (ms, mask output only) | all 12 outputs median | create  warm | pre+post | RSS MB | load 1-min");
  for (const model of models) {
    for (const backend of backends) {
      for (const t of threads) {
        const cfg: ChildConfig = { model, backend, threads: t, runs, fetchCompare: fetchCompare && t === maxThreads };
        const r = spawnSync(process.execPath, ["--import", "tsx", self, "--child", JSON.stringify(cfg)], {
          encoding: "utf8",
          maxBuffer: 16 * 2 ** 20,
        });
        const line = r.stdout.trim().split("\n").pop() ?? "";
        if (r.status !== 0 || !line.startsWith("{")) {
          const why = (r.stderr.trim().split("\n").find((l) => /Error|error/.test(l)) ?? r.stderr.trim().split("\n").pop() ?? "").slice(0, 160);
          console.log(`${model.padEnd(7)} ${backend.padEnd(7)} ${String(t).padStart(7)} | skipped: ${why}`);
          continue;
        }
        const res = JSON.parse(line) as ChildResult;
        results.push(res);
        const f = res.firstOnlyMs;
        const all = res.allOutputsMs ? String(round(median(res.allOutputsMs))).padStart(6) : "     -";
        console.log(
          `${model.padEnd(7)} ${backend.padEnd(7)} ${String(t).padStart(7)} | ${String(round(median(f))).padStart(6)} ${String(round(Math.min(...f))).padStart(6)} ${String(round(Math.max(...f))).padStart(6)}                          | ${all}                | ${String(round(res.createMs)).padStart(6)} ${String(round(res.warmMs)).padStart(5)} | ${String(round(res.preMs + res.postMs)).padStart(8)} | ${String(round(res.rssMB)).padStart(6)} | ${res.load.map((x) => x.toFixed(1)).join(" → ")}`,
        );
      }
    }
  }
  console.log(JSON.stringify({ bench: "inference-bare", results }));
}

const childIndex = process.argv.indexOf("--child");
if (childIndex >= 0) {
  const result = await child(JSON.parse(process.argv[childIndex + 1]!) as ChildConfig);
  console.log(JSON.stringify(result));
  process.exit(0); // ORT-web's thread pool would otherwise keep the process alive
} else {
  await parent();
}
