// Retry-After for 503 service_not_ready: how much of the start-up is probably left.
// Nothing reports start-up progress from inside the workers, so the estimate is the
// time a start usually takes (runtime and model load, graph optimisation) minus
// the time since this one began; once a start runs past that, a quarter of its elapsed
// time (a slow machine is slow throughout), so callers neither hammer nor wait minutes.

/** A usual start of the default model on wasm, seconds to tens of seconds. */
export const USUAL_START_MS = 20_000;

export function startUpRemainingMs(elapsedMs: number, usualMs: number = USUAL_START_MS): number {
  const left = usualMs - elapsedMs;
  return left > 0 ? left : elapsedMs / 4;
}
