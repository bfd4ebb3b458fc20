// Preloaded (node --import) into every thread of a bench:memory child: records each
// WebAssembly memory the thread creates or instantiates, names it by the module that
// made it (from the call's stack), and writes the thread's numbers to a file in
// MEMORY_BENCH_DIR every 100 ms and when asked, so the parent can read all threads.
import { writeFileSync } from "node:fs";
import { isMainThread, threadId } from "node:worker_threads";

const dir = process.env.MEMORY_BENCH_DIR;
if (dir) {
  const memories = []; // { name, memory, peak }
  const seen = new WeakSet();
  const origin = () => {
    const stack = new Error().stack ?? "";
    for (const [needle, name] of [
      ["onnxruntime-web", "ort"],
      ["ort-wasm", "ort"],
      ["ort.", "ort"],
      ["codec-jpeg-turbo", "jpeg-turbo"],
      ["@jsquash/jpeg", "jsquash-jpeg"],
      ["@jsquash/webp", "jsquash-webp"],
      ["@jsquash/png", "jsquash-png"],
      ["@jsquash/oxipng", "jsquash-oxipng"],
      ["imagescript", "imagescript"],
    ]) if (stack.includes(needle)) return name;
    return "other";
  };
  const note = (memory, name) => {
    if (!(memory instanceof Memory) || seen.has(memory)) return;
    seen.add(memory);
    memories.push({ name, memory, peak: 0 });
  };
  const Memory = WebAssembly.Memory;
  WebAssembly.Memory = class extends Memory {
    constructor(desc) {
      super(desc);
      note(this, origin());
    }
  };
  const fromExports = (result, name) => {
    const inst = result instanceof WebAssembly.Instance ? result : result?.instance;
    for (const v of Object.values(inst?.exports ?? {})) note(v, name);
    return result;
  };
  const { instantiate, instantiateStreaming } = WebAssembly;
  WebAssembly.instantiate = function (...a) {
    const name = origin();
    return instantiate.apply(this, a).then((r) => fromExports(r, name));
  };
  if (instantiateStreaming)
    WebAssembly.instantiateStreaming = function (...a) {
      const name = origin();
      return instantiateStreaming.apply(this, a).then((r) => fromExports(r, name));
    };
  const Instance = WebAssembly.Instance;
  WebAssembly.Instance = class extends Instance {
    constructor(m, i) {
      super(m, i);
      fromExports(this, origin());
    }
  };
  let peakHeap = 0;
  let peakExternal = 0;
  // With --gc, each snapshot follows a full collection: what is held, not what is
  // garbage not yet collected (band buffers of the last job, the decoder's outputs).
  const collect = process.env.MEMORY_BENCH_GC === "1" && typeof globalThis.gc === "function";
  const write = () => {
    if (collect) globalThis.gc();
    const u = process.memoryUsage();
    peakHeap = Math.max(peakHeap, u.heapUsed);
    peakExternal = Math.max(peakExternal, u.external);
    const wasm = memories.map((m) => {
      const bytes = m.memory.buffer.byteLength;
      m.peak = Math.max(m.peak, bytes);
      return { name: m.name, bytes, peak: m.peak, shared: m.memory.buffer instanceof SharedArrayBuffer };
    });
    const snap = { threadId, main: isMainThread, rss: u.rss, heapUsed: u.heapUsed, peakHeap, external: u.external, peakExternal, arrayBuffers: u.arrayBuffers, wasm };
    try {
      writeFileSync(`${dir}/thread-${threadId}.json`, JSON.stringify(snap));
    } catch {}
  };
  setInterval(write, 100).unref();
  globalThis.__memoryBenchWrite = write;
}
