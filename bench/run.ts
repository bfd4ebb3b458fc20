// npm run bench: per backend, the service's pipeline (product endpoint → worker pool →
// decode, inference, compose, encode) on a 12 MP and a ~0.4 MP JPEG at the preview and
// full tiers, against bare inference of the same model measured in the same run, one
// bare run right before each request (the machine is shared: interleaving keeps the ratio
// when the load changes; bench/inference-bare.ts measures bare inference on its own).
// Beside each row, the library's remove() on the same input and tier, and its ratio to the
// service's end-to-end time. Medians of --runs warm runs (default 5). Each backend runs in its own child process
// (ORT-web fixes its thread count per process). Under the table, the target ratios
// against their targets (bench/targets.ts), all from this one run, each the median of the
// requests' own ratios to the bare run before them.
//
//   npm run bench -- [--runs 5] [--backends wasm,native] [--threads 2] [--model <manifest name>, default the default model]
import { spawnSync } from "node:child_process";
import { availableParallelism, cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { targetRows, type BenchRow } from "./targets.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";

interface StageMedians {
  input: string;
  tier: "preview" | "full";
  outPixels: number;
  decodeMs: number;
  /** The upright image resized to the model's input. */
  modelInputMs: number;
  /** The session's run alone (tensor in, mask out). */
  inferenceMs: number;
  composeMs: number;
  encodeMs: number;
  e2eMs: number;
  /** Bare inference, one run right before each request of this row (bench/bare-session.ts). */
  bareMs: number;
  /** Median of each request's end to end ÷ its bare run. */
  e2eToBare: number;
  /** Median of each request's inference stage ÷ its bare run. */
  inferenceToBare: number;
  /** The library's remover.remove() on the same input and tier. */
  libraryMs: number;
}

interface ChildOut {
  backend: string;
  rows: StageMedians[];
}

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
};
const runs = Number(arg("runs", "5"));
const threads = Number(arg("threads", String(availableParallelism())));
const model = arg("model", DEFAULT_MODEL);
const backends = arg("backends", "wasm,native").split(",");
const root = fileURLToPath(new URL("../", import.meta.url));
const r0 = (x: number) => String(Math.round(x));

function runChild(script: string, args: string[]): string | { error: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", script, ...args], { encoding: "utf8", maxBuffer: 64 * 2 ** 20, cwd: root });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !line.startsWith("{")) {
    return { error: (r.stderr.trim().split("\n").find((l) => /rror/.test(l)) ?? r.stderr.trim().split("\n").pop() ?? "failed").slice(0, 200) };
  }
  return line;
}


console.log(`# npm run bench — ${new Date().toISOString()}`);
console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, model ${model}, ${threads} threads, ${runs} warm runs, load ${loadavg()[0].toFixed(2)}`);
console.log("");
console.log("| backend | input | tier | output px | decode | model input | inference | compose | encode | end-to-end | bare inference | overhead vs bare | library remove() | library ÷ service |");
console.log("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
const measured: BenchRow[] = [];
for (const backend of backends) {
  const pipeOut = runChild("bench/pipeline-child.ts", [JSON.stringify({ backend, threads, runs, model })]);
  if (typeof pipeOut !== "string") {
    console.log(`| ${backend} | pipeline skipped: ${pipeOut.error} |`);
    continue;
  }
  const out = JSON.parse(pipeOut) as ChildOut;
  for (const r of out.rows) {
    const overhead = (r.e2eToBare - 1) * 100;
    measured.push({ backend: out.backend, ...r });
    console.log(
      `| ${out.backend} | ${r.input} | ${r.tier} | ${r.outPixels.toLocaleString("en")} | ${r0(r.decodeMs)} | ${r0(r.modelInputMs)} | ${r0(r.inferenceMs)} | ${r0(r.composeMs)} | ${r0(r.encodeMs)} | ${r0(r.e2eMs)} | ${r0(r.bareMs)} | ${overhead.toFixed(0)} % | ${r0(r.libraryMs)} | ${(r.libraryMs / r.e2eMs).toFixed(2)} |`,
    );
  }
}
console.log("");
console.log("| target ratio | this run | target |");
console.log("|---|---:|---:|");
for (const t of targetRows(measured)) console.log(`| ${t.label} | ${t.ratio === undefined ? "not measured" : t.ratio.toFixed(2)} | ≤ ${t.target.toFixed(2)} |`);
console.log("");
console.log("All times in ms, medians. Model input: the upright image resized to the model's input; inference: the session's run alone.");
console.log("Overhead vs bare and the target ratios: the median over the requests of each one's time ÷ the bare run right before it.");
console.log("End-to-end: multipart request into the product endpoint until the PNG body is read.");
console.log("Bare inference: the same model and session options in a plain session on the tensor the pipeline gives the model for that image, one run right before each request, same process.");
console.log("Library remove(): `createRemover({ workers: 1 })` from the package entry, the call until the Cutout resolves.");
console.log(`Load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
