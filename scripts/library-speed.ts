// Times the library's remove() on one runtime, to compare Deno with Node on the same
// machine back to back: createRemover (one worker thread), then `runs` cut-outs of the
// rocket photo at the full tier; prints one JSON line with the model's own time per run.
//   node --import tsx scripts/library-speed.ts [threads] [runs]
//   ./node_modules/.bin/deno run -A scripts/library-speed.ts [threads] [runs]
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createRemover } from "../src/index.ts";

const [threadsArg = "2", runsArg = "3"] = process.argv.slice(2);
const runtime = "Deno" in globalThis ? "deno" : "node";
const image = readFileSync(new URL("../test/fixtures/photos/rocket.jpg", import.meta.url));
const load = loadavg()[0];
const t0 = performance.now();
const remover = await createRemover({ backend: "wasm", threads: Number(threadsArg) });
const createMs = Math.round(performance.now() - t0);
const runMs: number[] = [];
for (let i = 0; i < Number(runsArg); i++) {
  const started = performance.now();
  await remover.remove(image);
  runMs.push(Math.round(performance.now() - started));
}
await remover.dispose();
console.log(JSON.stringify({ runtime, threads: Number(threadsArg), createMs, runMs, loadAtStart: load }));
