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
  wentQuiet(v: "idle"): void;
}

export interface QuietWatch {
  /** Resolves once no byte came for idleMs (never, once stopped). */
  readonly idle: Promise<"idle">;
  /** A byte came. */
  stir(): void;
  stop(): void;
}

const watched = new Set<Watched>();
let ticker: ReturnType<typeof setInterval> | undefined;

/** Watches a read for `idleMs` without a byte, from now. */
export function watchQuiet(idleMs: number): QuietWatch {
  let wentQuiet = (_: "idle") => {};
  const idle = new Promise<"idle">((resolve) => (wentQuiet = resolve));
  const w: Watched = { lastByteAt: Date.now(), idleMs, wentQuiet };
  watched.add(w);
  if (ticker === undefined) {
    ticker = setInterval(tick, TICK_MS);
    unref(ticker);
  }
  return {
    idle,
    stir: () => void (w.lastByteAt = Date.now()),
    stop: () => void watched.delete(w),
  };
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
    w.wentQuiet("idle");
  }
}

/** A watch must not keep the process alive: Node's timers are objects with unref, Deno's web timers numbers. */
function unref(t: ReturnType<typeof setInterval>): void {
  if (typeof t === "object" && t !== null && "unref" in t) t.unref();
  else (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(t as unknown as number);
}
