// One AbortSignal for a whole call: it fires when the client's overall timeout runs out
// or when the caller's own signal fires, and remembers which of the two it was (the
// errors differ). Written with a plain AbortController and setTimeout rather than
// AbortSignal.any/timeout so it behaves the same in Node 20, Deno and older browsers.

export interface Deadline {
  readonly signal: AbortSignal;
  /** Which one fired: undefined while neither has. */
  readonly firedBy: "timeout" | "caller" | undefined;
  /** The caller's signal's reason, when it fired. */
  readonly callerReason: unknown;
  /** Stops the timer and unhooks the caller's signal; call once the call is over. */
  dispose(): void;
}

export function startDeadline(timeoutMs: number, caller?: AbortSignal): Deadline {
  const ctrl = new AbortController();
  let firedBy: "timeout" | "caller" | undefined;
  let callerReason: unknown;
  const fire = (by: "timeout" | "caller") => {
    if (firedBy) return;
    firedBy = by;
    ctrl.abort();
  };
  const onCallerAbort = () => {
    callerReason = caller?.reason;
    fire("caller");
  };
  const timer = setTimeout(() => fire("timeout"), timeoutMs);
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener("abort", onCallerAbort, { once: true });
  return {
    signal: ctrl.signal,
    get firedBy() {
      return firedBy;
    },
    get callerReason() {
      return callerReason;
    },
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onCallerAbort);
    },
  };
}

/** Waits `ms`, or rejects as soon as `signal` fires. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("aborted"));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
