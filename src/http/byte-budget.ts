// Counts request-body bytes being received across all requests of this process, so a
// flood of large uploads is refused (503 with Retry-After) instead of exhausting memory.
export interface ByteBudget {
  /** Reserves room for an upload expected to be up to `bytes` long; false when full. */
  tryTake(bytes: number): boolean;
  give(bytes: number): void;
  inUse(): number;
}

export function createByteBudget(limit: number): ByteBudget {
  let used = 0;
  return {
    tryTake(bytes) {
      if (used + bytes > limit) return false;
      used += bytes;
      return true;
    },
    give(bytes) {
      used = Math.max(0, used - bytes);
    },
    inUse: () => used,
  };
}
