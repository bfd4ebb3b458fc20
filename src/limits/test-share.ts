// Paid calls first: free test-key calls may hold at most a share of a capacity (the
// gateway's global concurrency cap, the product's queue). One rule for both places.
// The share is TEST_SHARE_PERCENT (src/config.ts, default 50).

export type CallClass = "live" | "test";

/** How many of `capacity` slots test calls may hold: the share rounded down, at least 1 unless the share is 0. */
export function testShareOf(capacity: number, percent: number): number {
  if (percent <= 0) return 0;
  return Math.min(capacity, Math.max(1, Math.floor((capacity * percent) / 100)));
}

export const isCallClass = (v: unknown): v is CallClass => v === "live" || v === "test";
