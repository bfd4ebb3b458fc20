// Reads a V8 CPU profile (`node --cpu-prof`, `deno run --cpu-prof-dir`) for the refusal
// bench: the main thread's samples within a window of the run, summed by the package or
// file of ours nearest the sampled frame (native and runtime-internal time is charged to
// the nearest one above it; the HTTP write system calls and the idle time are kept
// apart), as microseconds per answer. Both runtimes stamp their samples on the monotonic
// clock that process.hrtime reads, so a window is taken with monoUs() around a case.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string };
}

export interface Profile {
  nodes: ProfNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Microseconds on the clock the profiles use. */
export const monoUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** The main thread's profile among those written to `dir` (the largest: workers write their own). */
export function mainProfile(dir: string): Profile | undefined {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  const largest = files.sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  return largest === undefined ? undefined : (JSON.parse(readFileSync(join(dir, largest), "utf8")) as Profile);
}

/** `src/http/unread-body.ts`, `dist/wiring/logger.js`, a package name, `ext:deno_http`, or "" for native frames. */
function placeOf(url: string): string {
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = url.slice(nm + "node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const own = /\/((?:src|dist|bench)\/.*)$/.exec(url);
  if (own) return own[1]!;
  if (url.startsWith("ext:")) return url.split("/")[0]!;
  return url.startsWith("node:") ? "" : url;
}

const SYSCALLS = new Set(["writev", "writeBuffer", "writeString"]);

/** Lines: busy µs per answer, then the top places by µs per answer. */
export function summarise(p: Profile, window: [number, number], answers: number, top = 12): string[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, ProfNode>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n);
  const time = new Map<string, number>();
  let t = p.startTime;
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t < window[0] || t > window[1]) return;
    const node = byId.get(id)!;
    let place = SYSCALLS.has(node.callFrame.functionName) ? `(system call ${node.callFrame.functionName})` : "";
    for (let n: ProfNode | undefined = node; !place && n; n = parent.get(n.id)) place = placeOf(n.callFrame.url);
    if (!place) place = node.callFrame.functionName.startsWith("(") ? node.callFrame.functionName : "(runtime internals)";
    time.set(place, (time.get(place) ?? 0) + dt);
    total += dt;
  });
  const per = (us: number) => (us / Math.max(1, answers)).toFixed(2);
  const idle = time.get("(idle)") ?? 0;
  time.delete("(idle)");
  const lines = [`busy ${per(total - idle)} µs per answer on the main thread (idle ${per(idle)})`];
  for (const [place, us] of [...time].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${per(us).padStart(7)} µs  ${place}`);
  return lines;
}
