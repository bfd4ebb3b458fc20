// Memory samples of a process and their trend: resident set size from /proc (Linux;
// worker threads share the process, so the inference pool is included) and the
// least-squares slope in MB per minute.

export interface RssSample {
  /** Seconds since sampling started. */
  t: number;
  mb: number;
}

/** VmRSS of `pid` in MB, or NaN when it cannot be read. */
export async function readRssMb(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Least-squares slope of mb over t, in MB per minute (NaN with fewer than 2 samples). */
export function slopeMbPerMin(samples: readonly RssSample[]): number {
  const n = samples.length;
  if (n < 2) return NaN;
  const mt = samples.reduce((a, s) => a + s.t, 0) / n;
  const mm = samples.reduce((a, s) => a + s.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s.mb - mm);
    den += (s.t - mt) ** 2;
  }
  return den === 0 ? NaN : (num / den) * 60;
}

/** Samples after the warm-up: model arenas and JIT grow memory at first without being a leak. */
export function afterWarmup(samples: readonly RssSample[], warmupS: number): RssSample[] {
  return samples.filter((s) => s.t >= warmupS);
}
