// Tells a read that its client went quiet: one timer for every read being watched, not
// one each. The rest of a refused body is read with a bound on silence (unread-body.ts);
// a timer per read (set, then cleared or moved on as bytes come) cost a sixth of a
// refusal's time under Deno, whose timers are costly, while a flood keeps many reads
// going at once. The shared timer runs while any read is watched, and stops at its
// first tick with none. A read is told at most TICK_MS after its bound.
export const TICK_MS = 100;

interface Watched {
  /** When the last byte came (Date.now()). */
  lastByteAt: number;
  readonly idleMs: number;
  wentQuiet(): void;
}

export interface QuietWatch {
  /** A byte came. */
  stir(): void;
  stop(): void;
}

const watched = new Set<Watched>();
let ticker: ReturnType<typeof setInterval> | undefined;

/** Watches a read for `idleMs` without a byte, from now: `wentQuiet` is called once then, unless stopped first. */
export function watchQuiet(idleMs: number, wentQuiet: () => void): QuietWatch {
  const w: Watched = { lastByteAt: Date.now(), idleMs, wentQuiet };
  watched.add(w);
  if (ticker === undefined) {
    ticker = setInterval(tick, TICK_MS);
    unref(ticker);
  }
  return {
    stir: () => void (w.lastByteAt = Date.now()),
    stop: () => void watched.delete(w),
  };
}

/** The same as a promise, for a read that races it: resolves "idle" (never, once stopped). */
export function quietPromise(idleMs: number): QuietWatch & { idle: Promise<"idle"> } {
  let watch!: QuietWatch;
  const idle = new Promise<"idle">((resolve) => (watch = watchQuiet(idleMs, () => resolve("idle"))));
  return { idle, stir: watch.stir, stop: watch.stop };
}

function tick(): void {
  if (watched.size === 0) {
    clearInterval(ticker);
    ticker = undefined;
    return;
  }
  const now = Date.now();
  for (const w of watched) {
    if (now - w.lastByteAt < w.idleMs) continue;
    watched.delete(w);
    w.wentQuiet();
  }
}

/** A watch must not keep the process alive: Node's timers are objects with unref, Deno's web timers numbers. */
function unref(t: ReturnType<typeof setInterval>): void {
  if (typeof t === "object" && t !== null && "unref" in t) t.unref();
  else (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(t as unknown as number);
}
