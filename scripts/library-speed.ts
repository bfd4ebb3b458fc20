// Times the library's remove() on one runtime, to compare Deno with Node on the same
// machine back to back: createRemover (one worker thread), then `runs` cut-outs of the
// rocket photo at the full tier; prints one JSON line with the time of each remove().
//   node --import tsx scripts/library-speed.ts [threads] [runs] [workers]
//   ./node_modules/.bin/deno run -A scripts/library-speed.ts [threads] [runs] [workers]
// workers: 1 (default, a worker thread) or 0 (the model in the calling thread).
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createRemover } from "../src/index.ts";

const [threadsArg = "2", runsArg = "3", workersArg = "1"] = process.argv.slice(2);
const runtime = "Deno" in globalThis ? "deno" : "node";
const image = readFileSync(new URL("../test/fixtures/photos/rocket.jpg", import.meta.url));
const load = loadavg()[0];
const t0 = performance.now();
const remover = await createRemover({ backend: "wasm", threads: Number(threadsArg), workers: Number(workersArg) });
const createMs = Math.round(performance.now() - t0);
const runMs: number[] = [];
for (let i = 0; i < Number(runsArg); i++) {
  const started = performance.now();
  await remover.remove(image);
  runMs.push(Math.round(performance.now() - started));
}
await remover.dispose();
console.log(JSON.stringify({ runtime, threads: Number(threadsArg), workers: Number(workersArg), createMs, runMs, loadAtStart: load }));
// workers: 0 leaves ONNX Runtime's own threads in this process after dispose.
process.exit(0);
