// The one rounding rule for every Retry-After the service sends: whole seconds, rounded
// up so a client that obeys it is not refused again for a fraction of a second, at
// least 1 (0 would mean "now"), and never more than the request deadline (a wait longer
// than the deadline says nothing a client can act on). The estimates themselves come
// from the modules that know the state: src/product/admission.ts (queue and job time),
// src/limits/hold-clock.ts (permit holding time), src/product/warm-up.ts (start-up),
// src/http/byte-budget.ts (bytes being received). docs/DECISIONS.md lists each formula.

/** Upper bound when a caller has no deadline of its own: the spec's 140 s gateway deadline. */
export const RETRY_AFTER_MAX_S = 140;

export function retryAfterSeconds(ms: number, maxS: number = RETRY_AFTER_MAX_S): number {
  const s = Number.isFinite(ms) ? Math.ceil(ms / 1000) : maxS;
  return Math.min(Math.max(1, maxS), Math.max(1, s));
}
