// In-process limiter: the embedded default when no REDIS_URL is set, and the fast path
// for unit tests (the clock is injected, so tests advance time instead of sleeping).
// Counts live in this process only: two processes would each allow the full limit,
// which is why a split deployment uses the Redis limiter.
//
// Every method does its whole check-and-update without an await in between, so
// concurrent callers on the one event loop cannot both take the last slot.
import {
  DEFAULT_MAX_LOG_ENTRIES,
  DEFAULT_PERMIT_RETRY_AFTER_MS,
  LimiterUnavailableError,
  checkPositiveInt,
  type AcquireResult,
  type HitResult,
  type Limiter,
  type OverResult,
  type Permit,
} from "./limiter.ts";
import type { AcquireAllResult, PermitRequest } from "./acquire-all.ts";
import { dropExpired, insertSorted, msUntilBelow } from "./sliding-log.ts";
import { HANDOVER_GRACE_MS, WaitingLine, releasesToWait, retryAfterForPlace, type WaiterView } from "./waiting-line.ts";

export interface MemoryLimiterOptions {
  /** Milliseconds; defaults to Date.now. */
  now?: () => number;
  /** Retry-After hint for a refused permit (see DEFAULT_PERMIT_RETRY_AFTER_MS). */
  permitRetryAfterMs?: number;
  /** record() keeps at most this many newest events per key, so a flood cannot grow memory without bound. */
  maxLogEntries?: number;
  /** How often (in the injected clock's ms) idle keys are swept out of the maps. */
  sweepIntervalMs?: number;
  /** How long a refused caller's place in line outlives its Retry-After (HANDOVER_GRACE_MS). */
  handOverGraceMs?: number;
}

interface WindowLog {
  times: number[];
  /** When the newest entry leaves its window; after that the key can be forgotten. */
  idleAt: number;
}

interface LeaseSet {
  /** permit id → lease expiry */
  leases: Map<string, number>;
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): Limiter {
  const now = options.now ?? Date.now;
  const permitRetryAfterMs = options.permitRetryAfterMs ?? DEFAULT_PERMIT_RETRY_AFTER_MS;
  const maxLogEntries = options.maxLogEntries ?? DEFAULT_MAX_LOG_ENTRIES;
  const sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
  const graceMs = options.handOverGraceMs ?? HANDOVER_GRACE_MS;
  const windows = new Map<string, WindowLog>();
  const permits = new Map<string, LeaseSet>();
  /** cap key → its line of refused callers (waiting-line.ts) */
  const lines = new Map<string, WaitingLine>();
  let nextPermit = 0;
  let lastSweep = now();
  let closed = false;

  const tick = (): number => {
    if (closed) throw new LimiterUnavailableError("limiter is closed");
    const t = Math.floor(now());
    if (t - lastSweep >= sweepIntervalMs) sweep(t);
    return t;
  };

  // Forget keys nobody has touched for longer than their window or lease, so a stream
  // of distinct IPs or keys does not grow the maps forever.
  function sweep(t: number): void {
    lastSweep = t;
    for (const [key, log] of windows) if (log.idleAt <= t) windows.delete(key);
    for (const [key, set] of permits) {
      for (const [id, expiresAt] of set.leases) if (expiresAt <= t) set.leases.delete(id);
      if (set.leases.size === 0) permits.delete(key);
    }
    for (const [key, line] of lines) if (line.lastUntil() <= t) lines.delete(key);
  }

  function logFor(key: string): WindowLog {
    let log = windows.get(key);
    if (!log) windows.set(key, (log = { times: [], idleAt: 0 }));
    return log;
  }

  function add(log: WindowLog, t: number, windowMs: number): void {
    insertSorted(log.times, t);
    log.idleAt = Math.max(log.idleAt, t + windowMs);
  }

  function liveLeases(key: string, t: number): Map<string, number> {
    let set = permits.get(key);
    if (!set) permits.set(key, (set = { leases: new Map() }));
    for (const [id, expiresAt] of set.leases) if (expiresAt <= t) set.leases.delete(id);
    return set.leases;
  }

  /** The places waiting at `key`'s cap, lapsed ones dropped; undefined when nobody waits. */
  function lineAt(key: string, t: number): WaitingLine | undefined {
    const line = lines.get(key);
    line?.lapse(t);
    return line && line.size > 0 ? line : undefined;
  }

  /**
   * A lease on one of `max` slots under `key`, or, when the slots held plus the places
   * in line ahead of this caller fill the cap, the releases it must wait for.
   */
  function takeSlot(r: PermitRequest, t: number, w: WaiterView): { id: string } | { releases: number; untilPromoted: number } {
    const leases = liveLeases(r.key, t);
    const line = lineAt(r.key, t);
    const ahead = line?.ahead(w, t) ?? 0;
    if (leases.size + ahead >= r.max) return { releases: releasesToWait(leases.size, ahead, r.max), untilPromoted: line?.untilPromoted(w, t) ?? 0 };
    const id = `m${++nextPermit}`;
    leases.set(id, t + r.leaseMs);
    return { id };
  }

  function makePermit(key: string, id: string, defaultLeaseMs: number): Permit {
    let released = false;
    return {
      id,
      async renew(leaseMs = defaultLeaseMs) {
        checkPositiveInt("leaseMs", leaseMs);
        const t = tick();
        const leases = liveLeases(key, t);
        if (released || !leases.has(id)) return false;
        leases.set(id, t + leaseMs);
        return true;
      },
      async release() {
        if (released) return;
        released = true;
        permits.get(key)?.leases.delete(id);
      },
    };
  }

  const limiter: Limiter = {
    async hit(key, limit, windowMs): Promise<HitResult> {
      checkPositiveInt("limit", limit);
      checkPositiveInt("windowMs", windowMs);
      const t = tick();
      const log = logFor(key);
      const count = dropExpired(log.times, t, windowMs);
      if (count < limit) {
        add(log, t, windowMs);
        return { allowed: true, remaining: limit - count - 1, retryAfterMs: 0 };
      }
      return { allowed: false, remaining: 0, retryAfterMs: msUntilBelow(log.times, limit, t, windowMs) };
    },

    async isOver(key, limit, windowMs): Promise<OverResult> {
      checkPositiveInt("limit", limit);
      checkPositiveInt("windowMs", windowMs);
      const t = tick();
      const log = windows.get(key);
      if (!log) return { over: false, retryAfterMs: 0 };
      const count = dropExpired(log.times, t, windowMs);
      if (count < limit) return { over: false, retryAfterMs: 0 };
      return { over: true, retryAfterMs: msUntilBelow(log.times, limit, t, windowMs) };
    },

    async record(key, windowMs): Promise<number> {
      checkPositiveInt("windowMs", windowMs);
      const t = tick();
      const log = logFor(key);
      dropExpired(log.times, t, windowMs);
      add(log, t, windowMs);
      if (log.times.length > maxLogEntries) log.times.splice(0, log.times.length - maxLogEntries);
      return log.times.length;
    },

    // One permit is a set of one, so the two cannot drift apart.
    async acquire(key, max, leaseMs): Promise<AcquireResult> {
      const got = await limiter.acquireAll([{ key, max, leaseMs }]);
      return got.ok ? { ok: true, permit: got.permits[0]! } : { ok: false, retryAfterMs: got.retryAfterMs };
    },

    async acquireAll(requests, waiter): Promise<AcquireAllResult> {
      for (const r of requests) {
        checkPositiveInt("max", r.max);
        checkPositiveInt("leaseMs", r.leaseMs);
      }
      const t = tick();
      const w: WaiterView = waiter ? { caller: waiter.id, lane: waiter.lane, promoteAfterMs: waiter.promoteAfterMs } : { lane: "live", promoteAfterMs: 0 };
      // One pass without an await: nobody else's acquire runs between two of these.
      const ids: string[] = [];
      for (const [index, r] of requests.entries()) {
        const got = takeSlot(r, t, w);
        if (!("id" in got)) {
          ids.forEach((taken, i) => permits.get(requests[i]!.key)?.leases.delete(taken));
          const retryAfterMs = retryAfterForPlace(got.releases, r.releaseEveryMs ?? permitRetryAfterMs, waiter?.maxRetryAfterMs ?? 0, got.untilPromoted);
          if (waiter) {
            // Its place here, and the ones it already has at the other caps, last until it is due back.
            const until = t + retryAfterMs + graceMs;
            for (const other of requests) if (other.key !== r.key) lines.get(other.key)?.renew(waiter.id, until, t);
            let line = lines.get(r.key);
            if (!line) lines.set(r.key, (line = new WaitingLine()));
            line.join(waiter.id, waiter.lane, t, until);
          }
          return { ok: false, failedKey: r.key, failedIndex: index, retryAfterMs };
        }
        ids.push(got.id);
      }
      if (waiter) for (const r of requests) lines.get(r.key)?.leave(waiter.id);
      const held = requests.map((r, i) => makePermit(r.key, ids[i]!, r.leaseMs));
      return {
        ok: true,
        permits: held,
        async release() {
          for (const p of held) await p.release();
        },
      };
    },

    async ping() {
      return !closed;
    },

    async close() {
      closed = true;
      windows.clear();
      permits.clear();
      lines.clear();
    },
  };
  return limiter;
}
