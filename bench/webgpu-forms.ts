// Which form of the GPU model pays on this machine's WebGPU adapter, each in a fresh Deno
// process (bench/webgpu-forms-child.ts): float32 or float16 activations, graph capture on or
// off, batches of 1, 2 and 4 pictures; per form the start's parts (adapter, runtime import,
// graph rewrite, session creation, first run with its shader compiles) and the warm time per
// picture, and its mask against the float32, uncaptured, one-picture form's (levels of 255).
// Then `--exits N` fresh processes that start a session, run once and exit: each child's exit
// code and signal, with and without releasing the session and device first.
//   deno run -A bench/webgpu-forms.ts [--model int8-static-gpu] [--side 1024] [--runs 8]
//        [--batches 1,2,4] [--forms f32,f32-capture,f16,f16-capture] [--exits 20] [--exit-side 256]
//        [--child-timeout 150] [--optimization all]
import { parseArgs } from "node:util";
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { locateAssets } from "../src/engine/assets/locate.ts";

const { values } = parseArgs({
  options: {
    model: { type: "string", default: "int8-static-gpu" },
    side: { type: "string", default: "1024" },
    runs: { type: "string", default: "8" },
    batches: { type: "string", default: "1,2,4" },
    forms: { type: "string", default: "f32,f32-capture,f16,f16-capture" },
    exits: { type: "string", default: "0" },
    "exit-side": { type: "string", default: "256" },
    "child-timeout": { type: "string", default: "150" },
    optimization: { type: "string", default: "all" },
  },
});
const side = Number(values.side);
// The GPU form made whole first (derived from the default model's file on first use), so the children only read.
await locateAssets({ model: values.model! });
const batches = values.batches!.split(",").map(Number);

interface Outcome {
  code: number | null;
  signal: string | null;
  stdout: string;
  ms: number;
}

/** A fresh Deno process of the child with `form`; its exit code, signal and output. */
function child(form: object, maskOut: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["run", "-A", "bench/webgpu-forms-child.ts", JSON.stringify(form), maskOut], { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    p.stdout.on("data", (d: Uint8Array) => (stdout += new TextDecoder().decode(d)));
    const timer = setTimeout(() => p.kill("SIGKILL"), Number(values["child-timeout"]) * 1000);
    p.on("close", (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, ms: performance.now() - started });
    });
  });
}
const lastJson = (o: Outcome) => {
  const line = o.stdout.trim().split("\n").reverse().find((l) => l.startsWith("{"));
  return line ? JSON.parse(line) : undefined;
};

function levels(a: Float32Array, b: Float32Array): { max: number; mean: number } {
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!) * 255;
    max = Math.max(max, d);
    sum += d;
  }
  return { max: Math.round(max * 100) / 100, mean: Math.round((sum / a.length) * 1000) / 1000 };
}

const forms = values.forms!.split(",").filter(Boolean);
if (forms.length) {
  console.log(`\n| form | adapter import s | session create s | first run s | batch | warm ms a run | ms a picture | dispatches a run | mask vs f32 (max / mean levels) | exit |`);
  console.log("|---|---|---|---|---|---|---|---|---|---|");
}
let baseline: Float32Array | undefined;
for (const name of forms) {
  const maskOut = join(tmpdir(), `pd-form-${name}.f32`);
  const form = {
    model: values.model,
    half: name.startsWith("f16"),
    capture: name.endsWith("capture"),
    batches,
    side,
    runs: Number(values.runs),
    optimization: values.optimization,
    teardown: "release",
  };
  const o = await child(form, maskOut);
  const r = lastJson(o);
  const exit = `${o.code ?? "–"}${o.signal ? ` ${o.signal}` : ""}`;
  if (!r) {
    console.log(`| ${name} | failed after ${(o.ms / 1000).toFixed(1)} s | | | | | | | | ${exit} |`);
    continue;
  }
  let agreement = "–";
  try {
    const mask = new Float32Array(readFileSync(maskOut).buffer.slice(0));
    if (!baseline && name === "f32") baseline = mask;
    if (baseline) {
      const l = levels(baseline, mask);
      agreement = `${l.max} / ${l.mean}`;
    }
    rmSync(maskOut, { force: true });
  } catch {
    // no mask written: the row says so
  }
  for (const [i, row] of (r.rows as { n: number; firstMs: number; warmMs: number; perPictureMs: number; dispatches: number }[]).entries()) {
    const head = i === 0 ? `| ${name} | ${(r.parts.adapterMs / 1000).toFixed(2)} + ${(r.parts.importMs / 1000).toFixed(2)} | ${(r.parts.createMs / 1000).toFixed(2)} | ${(row.firstMs / 1000).toFixed(2)}` : `| | | | ${(row.firstMs / 1000).toFixed(2)}`;
    console.log(`${head} | ${row.n} | ${row.warmMs} | ${row.perPictureMs} | ${row.dispatches} | ${i === 0 ? agreement : ""} | ${i === 0 ? exit : ""} |`);
  }
  console.log(`<!-- ${name}: ${JSON.stringify({ adapter: r.adapter, f16: r.form.hasF16, parts: r.parts, createCalls: r.createCalls, first: r.rows[0]?.firstCalls })} -->`);
}

const exits = Number(values.exits);
if (exits > 0) {
  console.log(`\n${exits} fresh processes each: session (float32, ${values["exit-side"]}²), one run, exit; half release the session and destroy the device first:`);
  const tally: Record<string, number> = {};
  for (let i = 0; i < exits; i++) {
    const teardown = i % 2 === 0 ? "none" : "release";
    const o = await child({ model: values.model, half: false, capture: false, batches: [1], side: Number(values["exit-side"]), runs: 1, optimization: "all", teardown }, join(tmpdir(), "pd-exit.f32"));
    const key = `${teardown}: exit ${o.code ?? "–"}${o.signal ? ` signal ${o.signal}` : ""}${lastJson(o) ? "" : " (no result)"}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  for (const [k, n] of Object.entries(tally)) console.log(`- ${k}: ${n}`);
}
