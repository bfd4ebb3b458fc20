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

export interface MemoryLimiterOptions {
  /** Milliseconds; defaults to Date.now. */
  now?: () => number;
  /** Retry-After hint for a refused permit (see DEFAULT_PERMIT_RETRY_AFTER_MS). */
  permitRetryAfterMs?: number;
  /** record() keeps at most this many newest events per key, so a flood cannot grow memory without bound. */
  maxLogEntries?: number;
  /** How often (in the injected clock's ms) idle keys are swept out of the maps. */
  sweepIntervalMs?: number;
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
  const windows = new Map<string, WindowLog>();
  const permits = new Map<string, LeaseSet>();
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

  /** A lease on one of `max` slots under `key`, or undefined when they are all held. */
  function takeSlot(r: PermitRequest, t: number): string | undefined {
    const leases = liveLeases(r.key, t);
    if (leases.size >= r.max) return undefined;
    const id = `m${++nextPermit}`;
    leases.set(id, t + r.leaseMs);
    return id;
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

  return {
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

    async acquire(key, max, leaseMs): Promise<AcquireResult> {
      checkPositiveInt("max", max);
      checkPositiveInt("leaseMs", leaseMs);
      const id = takeSlot({ key, max, leaseMs }, tick());
      if (id === undefined) return { ok: false, retryAfterMs: permitRetryAfterMs };
      return { ok: true, permit: makePermit(key, id, leaseMs) };
    },

    async acquireAll(requests): Promise<AcquireAllResult> {
      for (const r of requests) {
        checkPositiveInt("max", r.max);
        checkPositiveInt("leaseMs", r.leaseMs);
      }
      const t = tick();
      // One pass without an await: nobody else's acquire runs between two of these.
      const ids: string[] = [];
      for (const [index, r] of requests.entries()) {
        const id = takeSlot(r, t);
        if (id === undefined) {
          ids.forEach((taken, i) => permits.get(requests[i]!.key)?.leases.delete(taken));
          return { ok: false, failedKey: r.key, failedIndex: index, retryAfterMs: permitRetryAfterMs };
        }
        ids.push(id);
      }
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
    },
  };
}
