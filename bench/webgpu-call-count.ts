// Counts calls into WebGPU, by method, for whatever runs between start() and stop(): every
// method of Deno's GPUDevice, GPUQueue, GPUCommandEncoder, GPUComputePassEncoder and GPUBuffer
// is wrapped on its prototype, so onnxruntime-web's provider and the planned run are counted
// the same way. Optionally times each call (JavaScript time to return, not the GPU's).
type Counts = Map<string, { calls: number; ms: number }>;

const CLASSES = ["GPUDevice", "GPUQueue", "GPUCommandEncoder", "GPUComputePassEncoder", "GPUBuffer"] as const;

export interface CallCounter {
  /** Calls (and their summed milliseconds) by "Class.method" since the last reset. */
  counts(): Counts;
  reset(): void;
  /** Puts every method back. */
  stop(): void;
}

export function countWebGpuCalls(): CallCounter {
  const counts: Counts = new Map();
  const restore: (() => void)[] = [];
  for (const cls of CLASSES) {
    const proto = (globalThis as unknown as Record<string, { prototype: Record<string, unknown> } | undefined>)[cls]?.prototype;
    if (!proto) continue;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const desc = Object.getOwnPropertyDescriptor(proto, name);
      if (!desc || typeof desc.value !== "function" || name === "constructor") continue;
      const original = desc.value as (...a: unknown[]) => unknown;
      const key = `${cls.slice(3)}.${name}`;
      proto[name] = function (this: unknown, ...args: unknown[]) {
        const t = performance.now();
        try {
          return original.apply(this, args);
        } finally {
          const c = counts.get(key) ?? { calls: 0, ms: 0 };
          c.calls++;
          c.ms += performance.now() - t;
          counts.set(key, c);
        }
      };
      restore.push(() => Object.defineProperty(proto, name, desc));
    }
  }
  return {
    counts: () => new Map(counts),
    reset: () => counts.clear(),
    stop: () => restore.splice(0).forEach((r) => r()),
  };
}

/** All calls in `counts`. */
export const totalCalls = (counts: Counts): number => [...counts.values()].reduce((s, c) => s + c.calls, 0);
