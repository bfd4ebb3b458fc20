// One bench:memory measurement in a fresh process (started by memory.ts with the hook
// preloaded): createRemover with the library's defaults (the service's: one worker, a
// thread per core) and MODEL, one remove() of the 12 MP JPEG the parent wrote (made there, so no codec of ours runs
// here before the engine does), at SIZE (default full), then the process RSS.
import { readFileSync, writeFileSync } from "node:fs";
import { createRemover } from "../src/engine/library/remover.ts";
import { DEFAULT_MODEL } from "../src/engine/inference/default-model.ts";

const model = process.argv[2] ?? DEFAULT_MODEL;
const input = new Uint8Array(readFileSync(process.argv[3]!));
const out = process.argv[4]!;
const size = (process.argv[5] ?? "full") as "full" | "preview";
const rss = () => process.memoryUsage().rss;
let peakRss = 0;
const timer = setInterval(() => (peakRss = Math.max(peakRss, rss())), 50);
const rssBefore = rss();
const t0 = performance.now();
const remover = await createRemover({ model });
const rssCreated = rss();
const createMs = performance.now() - t0;
const t1 = performance.now();
const res = await remover.remove(input, { size });
const removeMs = performance.now() - t1;
await new Promise((r) => setTimeout(r, 400)); // every thread's hook writes its file
const rssAfter = rss();
clearInterval(timer);
peakRss = Math.max(peakRss, rssAfter);
// The kernel's high-water mark of the whole process (every thread), not a sample.
const maxRss = process.resourceUsage().maxRSS * 1024;
writeFileSync(out, JSON.stringify({ model, size, rssBefore, rssCreated, rssAfter, peakRss, maxRss, createMs, removeMs, pngBytes: res.png?.length ?? 0 }));
await remover.dispose();
