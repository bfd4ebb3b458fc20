// The concurrency permits a call takes before any money moves, and what a refusal says.
// A live call: its organization's live slot (2) and a slot under the global cap. A test
// call: its key's slot (1), a slot under the test share of the global cap (paid calls
// first: test calls may hold at most TEST_SHARE_PERCENT of it, so the rest is always
// there for live calls), and the global slot. Narrowest first, taken in one step of the
// limits store (Limiter.acquireAll, src/limits/acquire-all.ts).
// A refused call keeps a place in line at the cap that refused it, under its API key
// (src/limits/waiting-line.ts): the next freed slot is held for the first place, so a
// client that comes back when told gets in ahead of one that sends again at once. Live
// places go first; a test place goes before them once it has waited TEST_MAX_WAIT_MS,
// the rule the product's queue follows (docs/DECISIONS.md, "Fair hand-over at a cap").
// Retry-After on a refusal is when the caller's turn is expected: the releases ahead of
// its place × how often a slot of that kind frees (hold-clock.ts: holding time ÷ cap),
// whole seconds by the one rule in retry-after.ts.
import { fail, type Failure } from "../http/api-error.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";
import type { Limiter, Permit } from "../limits/index.ts";
import type { HoldClock, HoldGroup } from "../limits/hold-clock.ts";
import { testShareOf } from "../limits/test-share.ts";
import type { KeyContext } from "./ports.ts";

export interface CapacitySettings {
  globalConcurrency: number;
  orgLiveConcurrency: number;
  testSharePercent: number;
  /** A test call's place in line goes before live ones once it has waited this long (TEST_MAX_WAIT_MS). */
  testMaxWaitMs: number;
  permitLeaseMs: number;
  deadlineMs: number;
}

interface Slot {
  key: string;
  max: number;
  group: HoldGroup;
  refusal: (retryAfterS: number) => Failure;
}

/** The permit key under which test calls count against their share of the global cap. */
export const TEST_SHARE_PERMIT = "global-test";

function slotsFor(key: KeyContext, s: CapacitySettings): Slot[] {
  const global: Slot = {
    key: "global",
    max: s.globalConcurrency,
    group: "global",
    refusal: (r) => fail("rate_limited", "The service is at its concurrency limit", r),
  };
  if (key.kind === "live") {
    return [
      {
        key: `org-live:${key.orgId}`,
        max: s.orgLiveConcurrency,
        group: "org-live",
        refusal: (r) => fail("rate_limited", "Your organization already has the maximum of concurrent live requests", r),
      },
      global,
    ];
  }
  return [
    { key: `test-concurrent:${key.keyId}`, max: 1, group: "test", refusal: (r) => fail("test_quota_exceeded", "Test keys allow 1 call at a time", r) },
    {
      key: TEST_SHARE_PERMIT,
      max: testShareOf(s.globalConcurrency, s.testSharePercent),
      group: "test",
      refusal: (r) => fail("rate_limited", "Test keys may use only part of the service's capacity; live keys go first", r),
    },
    global,
  ];
}

export interface HeldPermits {
  ok: true;
  permits: readonly Permit[];
  /** The call goes on to the product: its holding time is one to learn from. */
  goesToProduct(): void;
  /** Stops the renewals, gives the permits back and records how long they were held (if it went to the product). */
  release(): Promise<void>;
}

// Permits are short leases (permitLeaseMs) renewed every third of the lease while the
// call holds them: a gateway that dies frees its slots within one lease instead of
// holding them for a whole deadline.

/** Takes the call's permits and keeps them alive until release() gives them back. */
export async function takePermits(
  limiter: Limiter,
  key: KeyContext,
  s: CapacitySettings,
  holds: HoldClock,
  now: () => number,
  onRenewError: (err: unknown) => void,
): Promise<HeldPermits | Failure> {
  const slots = slotsFor(key, s);
  const maxS = Math.ceil(s.deadlineMs / 1000);
  const closed = slots.find((x) => x.max < 1);
  if (closed) return closed.refusal(maxS); // TEST_SHARE_PERCENT=0: test calls are not served
  const got = await limiter.acquireAll(
    slots.map((x) => ({ key: x.key, max: x.max, leaseMs: s.permitLeaseMs, releaseEveryMs: holds.untilRelease(x.group, x.max) })),
    { id: key.keyId, lane: key.kind, promoteAfterMs: s.testMaxWaitMs, maxRetryAfterMs: s.deadlineMs },
  );
  if (!got.ok) return slots[got.failedIndex]!.refusal(retryAfterSeconds(got.retryAfterMs, maxS));
  const takenAt = now();
  const renewing = setInterval(() => {
    for (const p of got.permits) p.renew(s.permitLeaseMs).catch(onRenewError);
  }, Math.max(100, Math.floor(s.permitLeaseMs / 3)));
  let released = false;
  // A call refused right after (no credit, a spending limit) held its slot for
  // milliseconds; counting it would make a full cap look about to free.
  let worked = false;
  return {
    ok: true,
    permits: got.permits,
    goesToProduct: () => void (worked = true),
    async release() {
      if (released) return;
      released = true;
      clearInterval(renewing);
      const held = now() - takenAt;
      if (worked) for (const g of new Set(slots.map((x) => x.group))) holds.record(g, held);
      await got.release();
    },
  };
}
