// One bench:webgpu measurement in a fresh Deno process: createRemover on one backend, then
// remove() of the photo the parent wrote, twice (the first is the cold user's time to a
// cut-out, the second a warm call). The built package is imported, as a Deno user gets it.
//   deno run -A bench/webgpu-child.ts <backend> <model | default> <photo> <threads>
// "default": no model named, as a user calls it (backend auto may then choose the GPU form).
import { readFileSync } from "node:fs";
import { createRemover } from "../dist/index.js";

const [backend, model, photoPath, threadsArg] = process.argv.slice(2);
const processStart = Number(process.env.PD_BENCH_SPAWNED_AT ?? Date.now() - performance.now());
const photo = new Uint8Array(readFileSync(photoPath!));
const t0 = performance.now();
const remover = await createRemover({ backend: backend as "wasm" | "webgpu" | "auto", ...(model === "default" ? {} : { model }), threads: Number(threadsArg) });
const createMs = performance.now() - t0;
const t1 = performance.now();
const first = await remover.remove(photo);
const firstMs = performance.now() - t1;
// From the process's start (Deno's own start included) to the first cut-out in hand.
const processToFirstMs = Date.now() - processStart;
const t2 = performance.now();
await remover.remove(photo);
const secondMs = performance.now() - t2;
const used = remover.backend;
await remover.dispose();
console.log(JSON.stringify({ backend, used, model: remover.model, createMs, firstMs, processToFirstMs, secondMs, pngBytes: first.png.length, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20) }));
