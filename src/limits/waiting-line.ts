// The line at a full cap: callers refused there, in the order they were first refused,
// so a freed slot goes to the one that has waited longest instead of to whoever asks
// first after it frees (a closed-loop client sending again at once would otherwise take
// every slot back before a client that waits its Retry-After returns).
//
// Rules (the Redis script in redis-scripts.ts does the same arithmetic on sorted sets):
// - Two lanes: "live" places go first; a "test" place goes after them until it has
//   waited promoteAfterMs, then before them (paid calls first, test calls not starved).
//   Within a lane, first refused, first served.
// - A call is admitted at a cap when the slots held plus the places ahead of it are
//   fewer than the cap. A caller in line counts only the places ahead of its own; a
//   newcomer counts every place that goes before its lane; a call that names no caller
//   counts every place.
// - A refused caller joins the line (once: one caller, one place) and is told to come
//   back when its turn is expected: the releases it must wait for × the cap's release
//   interval, in whole seconds. Its place lapses HANDOVER_GRACE_MS after that unless it
//   asks again (a refusal renews it, keeping its place), so a caller that goes away
//   holds a freed slot no longer than its own Retry-After plus the grace.
// - Admitted, a caller leaves the line of every cap it took.
//
// Places are ordered by a score: the time of the first refusal in ms × SCORE_PER_MS, plus
// a counter within that millisecond, so order is arrival order in both implementations
// and the score still tells when a place was taken (for the promotion).
import type { CallClass } from "./test-share.ts";

/**
 * How long past its Retry-After a place is kept: the client's timer, its network and
 * the upload of its body (read before any permit is asked for) on the way back.
 */
export const HANDOVER_GRACE_MS = 3000;

/** Places taken within one millisecond are told apart by a counter below this. */
export const SCORE_PER_MS = 1024;

interface Place {
  caller: string;
  score: number;
}

/** Releases a caller must wait for, given the slots held, the places ahead and the cap. */
export function releasesToWait(held: number, ahead: number, max: number): number {
  return Math.max(1, held + ahead - max + 1);
}

/**
 * When to come back: the releases ahead × the release interval, or, for a test place that
 * live places are ahead of, one release after it is promoted (`untilPromotedMs` > 0):
 * live callers keep arriving ahead of it until then, so an earlier return would only be
 * refused again (and use up the test key's calls per minute). Whole seconds in ms, at
 * least 1 s, at most maxMs (0: unbounded).
 */
export function retryAfterForPlace(releases: number, releaseEveryMs: number, maxMs: number, untilPromotedMs = 0): number {
  let ms = releases * releaseEveryMs;
  if (untilPromotedMs > 0) ms = Math.max(ms, untilPromotedMs + releaseEveryMs);
  const s = Math.max(1, Math.ceil(ms / 1000)) * 1000;
  return maxMs > 0 ? Math.min(s, Math.max(1000, Math.ceil(maxMs / 1000) * 1000)) : s;
}

export interface WaiterView {
  caller?: string;
  lane: CallClass;
  promoteAfterMs: number;
}

export class WaitingLine {
  private readonly lanes: Record<CallClass, Place[]> = { live: [], test: [] };
  /** caller → when its place lapses */
  private readonly until = new Map<string, number>();

  get size(): number {
    return this.until.size;
  }

  /** Drops the places that lapsed by `t`. */
  lapse(t: number): void {
    for (const [caller, u] of this.until) if (u <= t) this.leave(caller);
  }

  /** Places that go before `w` at time `t` (see the rules above). */
  ahead(w: WaiterView, t: number): number {
    const live = this.lanes.live;
    const test = this.lanes.test;
    if (w.caller === undefined) return live.length + test.length;
    const agedBound = (t - w.promoteAfterMs) * SCORE_PER_MS + SCORE_PER_MS - 1;
    const mine = this.lanes[w.lane].findIndex((p) => p.caller === w.caller);
    if (w.lane === "live") {
      const aged = test.filter((p) => p.score <= agedBound).length;
      return aged + (mine >= 0 ? mine : live.length);
    }
    if (mine < 0) return live.length + test.length;
    return test[mine]!.score <= agedBound ? mine : live.length + mine;
  }

  /** For a test place (or a test caller about to take one) with live places waiting: ms until it is promoted; else 0. */
  untilPromoted(w: WaiterView, t: number): number {
    if (w.caller === undefined || w.lane !== "test" || this.lanes.live.length === 0) return 0;
    const mine = this.lanes.test.find((p) => p.caller === w.caller);
    const since = mine ? Math.floor(mine.score / SCORE_PER_MS) : t;
    return Math.max(0, since + w.promoteAfterMs - t);
  }

  has(caller: string): boolean {
    return this.until.has(caller);
  }

  /** Takes a place for `caller` at the end of its lane unless it has one; it lasts until `until`. */
  join(caller: string, lane: CallClass, t: number, until: number): void {
    if (!this.until.has(caller)) {
      const places = this.lanes[lane];
      const base = t * SCORE_PER_MS;
      let score = base;
      for (const p of places) if (p.score >= base && p.score < base + SCORE_PER_MS) score = Math.max(score, Math.min(p.score + 1, base + SCORE_PER_MS - 1));
      let at = places.length;
      while (at > 0 && places[at - 1]!.score > score) at--;
      places.splice(at, 0, { caller, score });
    }
    this.until.set(caller, until);
  }

  /** Renews a place the caller still has (refused at another cap: it is still waiting); never shortens it. */
  renew(caller: string, until: number, t: number): void {
    this.lapse(t);
    if (this.until.has(caller)) this.until.set(caller, Math.max(until, this.until.get(caller)!));
  }

  leave(caller: string): void {
    if (!this.until.delete(caller)) return;
    for (const lane of [this.lanes.live, this.lanes.test]) {
      const i = lane.findIndex((p) => p.caller === caller);
      if (i >= 0) lane.splice(i, 1);
    }
  }

  /** When the last place lapses (for forgetting an idle line). */
  lastUntil(): number {
    let last = 0;
    for (const u of this.until.values()) last = Math.max(last, u);
    return last;
  }
}
