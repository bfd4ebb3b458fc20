// Hashes of presented keys that have no row at all, remembered for a minute so a client
// stuck in a retry loop with a mistyped key (or a flood of one made-up key) costs a map
// lookup instead of a database query each time (401 unknown key under load).
// Safe because such a hash can never gain a row: keys are 238 random bits chosen when
// they are issued, so no key text is presented before it exists. Only "no row" is
// remembered; deleted, expired, dormant and suspended keys have rows and are judged
// from them on every call.

/** How long "no such key" is believed. */
export const UNKNOWN_KEY_MEMORY_MS = 60_000;
/** At most this many remembered at once; when full the memory starts over (bounded under a flood of distinct keys). */
export const UNKNOWN_KEY_MEMORY_MAX = 10_000;

export interface UnknownHashes {
  has(hash: string): boolean;
  add(hash: string): void;
}

export function createUnknownHashes(now: () => number): UnknownHashes {
  const until = new Map<string, number>();
  return {
    has(hash) {
      const t = until.get(hash);
      if (t === undefined) return false;
      if (now() < t) return true;
      until.delete(hash);
      return false;
    },
    add(hash) {
      if (until.size >= UNKNOWN_KEY_MEMORY_MAX) until.clear();
      until.set(hash, now() + UNKNOWN_KEY_MEMORY_MS);
    },
  };
}
