// One bench:webgpu measurement in a fresh Deno process, on the built package (dist/), as a
// Deno user gets it. Prints one JSON line.
//   remover <backend> <threads> <12 MP photo> <0.4 MP photo> <runs>
//       createRemover, then at once a 12 MP remove() (a cold user's first cut-out: on a GPU
//       host with auto, WebAssembly's while the GPU starts), then, once the remover has
//       settled (auto: the GPU has taken over), warm 12 MP full-size, 12 MP preview and
//       0.4 MP full-size calls, medians of `runs` each.
//   throughput <callers,…> <seconds> <gpu workers | default> <photo> …
//       the engine as createRemover builds it (auto), once settled: for each photo and each
//       count of callers, that many callers each removing the photo again and again for
//       `seconds`; pictures a second, and the GPU's runs and pictures in the meantime.
//   exit <photo>
//       createRemover (auto), settled, one remove(), dispose, then nothing: the process must
//       end by itself with exit code 0 (the parent records its code and signal).
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { createRemover } from "../dist/index.js";
import { openEngine } from "../dist/engine/library/open-engine.js";
import { median } from "./median.ts";

const [mode, ...args] = process.argv.slice(2);
const spawnedAt = Number(process.env.PD_BENCH_SPAWNED_AT ?? Date.now() - performance.now());
const read = (p: string) => new Uint8Array(readFileSync(p));
const ms = (from: number) => Math.round(performance.now() - from);
const rssMiB = () => Math.round(process.memoryUsage().rss / 2 ** 20);

async function remover(backend: string, threads: string, big: string, small: string, runsArg: string) {
  const photo = read(big);
  const t0 = performance.now();
  const r = await createRemover({ backend: backend as "wasm" | "auto", threads: Number(threads) });
  const createMs = ms(t0);
  const first = { backend: r.backend, model: r.model };
  const t1 = performance.now();
  await r.remove(photo);
  const firstMs = ms(t1);
  const processToFirstMs = Date.now() - spawnedAt;
  await r.whenSettled();
  const settledMs = Date.now() - spawnedAt;
  const warm = async (bytes: Uint8Array, options: { size?: "preview" | "full" }) => {
    await r.remove(bytes, options); // after settling, the new backend's first call
    const times: number[] = [];
    for (let i = 0; i < Number(runsArg); i++) {
      const t = performance.now();
      await r.remove(bytes, options);
      times.push(performance.now() - t);
    }
    return Math.round(median(times));
  };
  const fullMs = await warm(photo, { size: "full" });
  const previewMs = await warm(photo, { size: "preview" });
  const smallFullMs = await warm(read(small), { size: "full" });
  const after = { backend: r.backend, model: r.model };
  await r.dispose();
  return { backend, first, after, createMs, firstMs, processToFirstMs, settledMs, fullMs, previewMs, smallFullMs, rssMiB: rssMiB() };
}

async function throughput(callersArg: string, secondsArg: string, gpuWorkers: string, photos: string[]) {
  const engine = await openEngine({
    model: "int8-static",
    backend: "auto",
    threads: availableParallelism(),
    workers: 1,
    ...(gpuWorkers === "default" ? {} : { gpuWorkers: Number(gpuWorkers) }),
  });
  await engine.whenReady();
  await engine.settled?.();
  const st = engine.state();
  const rows = [];
  for (const path of photos) {
    const bytes = read(path);
    const once = async () => {
      const result = await engine.run({ image: bytes.slice(), size: "full", semitransparency: false });
      if (!result.ok) throw new Error(result.title);
    };
    await once();
    for (const callers of callersArg.split(",").map(Number)) {
      const before = engine.state().gpuBatches;
      await new Promise((r) => setTimeout(r, 20));
      const start = performance.now();
      const until = start + Number(secondsArg) * 1000;
      let done = 0;
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (performance.now() < until) {
            await once();
            done++;
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      engine.state(); // asks the session thread for its counts
      await new Promise((r) => setTimeout(r, 50));
      const after = engine.state().gpuBatches;
      const runs = after && before ? after.runs - before.runs : undefined;
      const pictures = after && before ? after.pictures - before.pictures : undefined;
      rows.push({ photo: path, callers, pictures: done, seconds: Math.round(seconds * 10) / 10, perSecond: Math.round((done / seconds) * 100) / 100, gpuRuns: runs, gpuPictures: pictures });
      console.error(JSON.stringify(rows.at(-1)));
    }
  }
  await engine.dispose();
  return { backend: st.backend, model: st.model, poolSize: st.poolSize, bandHelpers: st.bandHelpers, maxBatch: st.gpuBatches?.max, gpuPhase: st.gpuPhase, gpuFallback: st.gpuFallback, rows, rssMiB: rssMiB() };
}

async function exit(photo: string) {
  const r = await createRemover();
  await r.whenSettled();
  const cut = await r.remove(read(photo));
  const used = { backend: r.backend, model: r.model, width: cut.width };
  await r.dispose();
  return used;
}

const result =
  mode === "remover"
    ? await remover(args[0]!, args[1]!, args[2]!, args[3]!, args[4] ?? "3")
    : mode === "throughput"
      ? await throughput(args[0]!, args[1]!, args[2]!, args.slice(3))
      : mode === "exit"
        ? await exit(args[0]!)
        : (() => {
            throw new Error("usage: webgpu-child.ts remover|throughput|exit …");
          })();
console.log(JSON.stringify(result));
