// Redis limiter: what lets several gateway processes keep one org cap of 2. All state
// is in Redis under `keyPrefix`, every decision is one Lua script (redis-scripts.ts)
// using Redis server time, so processes with skewed clocks still agree (a test may set
// the time the scripts see instead: `now`).
//
// Outages: a call never waits long. While the connection is down a call waits at most
// `readyTimeoutMs` for ioredis to reconnect, and a sent command at most
// `commandTimeoutMs`; then it rejects with LimiterUnavailableError (→ 503). Commands are
// not queued offline or resent after a reconnect: the caller has already been told
// "unavailable", and replaying a hit or acquire later would count something nobody is
// waiting for. ioredis keeps reconnecting in the background, so service resumes on its
// own once Redis is back (scripts are reloaded on NOSCRIPT).
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
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
import type { AcquireAllResult } from "./acquire-all.ts";
import { ACQUIRE_ALL, HIT, IS_OVER, RECORD, RELEASE_ALL, RENEW, type LuaScript } from "./redis-scripts.ts";
import { HANDOVER_GRACE_MS } from "./waiting-line.ts";

export interface RedisLimiterOptions {
  url: string;
  /** Prepended to every key; lets tests (and several deployments) share one Redis. */
  keyPrefix?: string;
  /** Longest wait for one command's reply. */
  commandTimeoutMs?: number;
  /** Longest wait for a (re)connection before a call gives up. */
  readyTimeoutMs?: number;
  /** Retry-After hint for a refused permit (see DEFAULT_PERMIT_RETRY_AFTER_MS). */
  permitRetryAfterMs?: number;
  /** record() keeps at most this many newest events per key. */
  maxLogEntries?: number;
  /** Connection errors and failed releases; they are otherwise dropped (ping() shows health). */
  onError?: (err: Error) => void;
  /** How long a refused caller's place in line outlives its Retry-After (HANDOVER_GRACE_MS). */
  handOverGraceMs?: number;
  /**
   * Tests only: the time in ms every script sees, in place of Redis's own clock (TIME).
   * Keys still expire on Redis's clock, so a test that moves this forward uses windows
   * and leases longer than it runs (the contract's 60 s), never shorter.
   */
  now?: () => number;
}

export const DEFAULT_KEY_PREFIX = "pd:limits:";

export function createRedisLimiter(options: RedisLimiterOptions): Limiter {
  const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const readyTimeoutMs = options.readyTimeoutMs ?? 500;
  const permitRetryAfterMs = options.permitRetryAfterMs ?? DEFAULT_PERMIT_RETRY_AFTER_MS;
  const maxLogEntries = options.maxLogEntries ?? DEFAULT_MAX_LOG_ENTRIES;
  const onError = options.onError ?? (() => {});
  const graceMs = options.handOverGraceMs ?? HANDOVER_GRACE_MS;
  const clock = options.now;

  const client = new Redis(options.url, {
    connectionName: "pixeldrop-limits",
    commandTimeout: options.commandTimeoutMs ?? 1000,
    connectTimeout: 2000,
    // Fail calls made while disconnected instead of queueing them (see top of file),
    // and fail in-flight ones as soon as the connection drops.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Keep trying forever, but at least once a second, so a restarted Redis is picked up quickly.
    retryStrategy: (times) => Math.min(times * 100, 1000),
    // Commands issued in the same event-loop turn by concurrent requests go out as one
    // write: under load (docs/RELIABILITY.md) that saves a syscall and a Redis read per
    // command. Each is still its own atomic script; only the transport is batched.
    enableAutoPipelining: true,
  });
  client.on("error", (err: Error) => onError(err));

  // Calls that arrive while (re)connecting wait here, bounded by readyTimeoutMs.
  const waiters = new Set<() => void>();
  client.on("ready", () => {
    for (const wake of waiters) wake();
    waiters.clear();
  });
  let closed = false;

  async function ready(): Promise<void> {
    if (closed) throw new LimiterUnavailableError("limiter is closed");
    if (client.status === "ready") return;
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(wake);
        reject(new LimiterUnavailableError(`limits store not reachable (connection ${client.status})`));
      }, readyTimeoutMs);
      waiters.add(wake);
    });
    if (closed) throw new LimiterUnavailableError("limiter is closed");
  }

  async function run(script: LuaScript, keys: string | readonly string[], args: (string | number)[]): Promise<unknown> {
    await ready();
    const ks = typeof keys === "string" ? [keys] : keys;
    if (script.clock) args.push(clock ? Math.floor(clock()) : "");
    try {
      try {
        return await client.evalsha(script.sha, ks.length, ...ks, ...args);
      } catch (err) {
        // A fresh or restarted Redis has no scripts cached: send the source once.
        if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
        return await client.eval(script.source, ks.length, ...ks, ...args);
      }
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new LimiterUnavailableError(`limits store failed in ${script.name}: ${why}`, { cause: err });
    }
  }

  // Unique member ids without a round trip: a random per-instance tag plus a counter.
  const instanceTag = randomBytes(6).toString("base64url");
  let seq = 0;
  const nextId = () => `${instanceTag}:${(++seq).toString(36)}`;
  const windowKey = (key: string) => `${prefix}w:${key}`;
  const permitKey = (key: string) => `${prefix}p:${key}`;
  /** The line of refused callers at a cap (waiting-line.ts): its two lanes and its places' lapse times. */
  const lineKey = (key: string, part: "live" | "test" | "until") => `${prefix}q:${part}:${key}`;

  /** A permit, and the one-way switch a set's release flips for it without a round trip of its own. */
  interface HeldPermit {
    permit: Permit;
    /** Marks it released; true if it was still held (so the caller removes it from Redis). */
    markReleased(): boolean;
    key: string;
  }

  function makePermit(key: string, id: string, defaultLeaseMs: number): HeldPermit {
    let released = false;
    const markReleased = () => !released && (released = true);
    return {
      key,
      markReleased,
      permit: {
        id,
        async renew(leaseMs = defaultLeaseMs) {
          checkPositiveInt("leaseMs", leaseMs);
          if (released) return false;
          return (await run(RENEW, permitKey(key), [id, leaseMs])) === 1;
        },
        async release() {
          if (!markReleased()) return;
          await quietly(async () => {
            await ready();
            await client.zrem(permitKey(key), id);
          });
        },
      },
    };
  }

  /**
   * A failed release is reported, not thrown: the lease expires on its own, and the
   * caller is usually in a finally block and must not have its own outcome replaced.
   */
  async function quietly(step: () => Promise<unknown>): Promise<void> {
    try {
      await step();
    } catch (err) {
      onError(err instanceof Error ? err : new Error(String(err)));
    }
  }

  const limiter: Limiter = {
    async hit(key, limit, windowMs): Promise<HitResult> {
      checkPositiveInt("limit", limit);
      checkPositiveInt("windowMs", windowMs);
      const [allowed, remaining, retryAfterMs] = asInts(await run(HIT, windowKey(key), [limit, windowMs, nextId()]), 3);
      return { allowed: allowed === 1, remaining: remaining!, retryAfterMs: retryAfterMs! };
    },

    async isOver(key, limit, windowMs): Promise<OverResult> {
      checkPositiveInt("limit", limit);
      checkPositiveInt("windowMs", windowMs);
      const [over, retryAfterMs] = asInts(await run(IS_OVER, windowKey(key), [limit, windowMs]), 2);
      return { over: over === 1, retryAfterMs: retryAfterMs! };
    },

    async record(key, windowMs): Promise<number> {
      checkPositiveInt("windowMs", windowMs);
      return Number(await run(RECORD, windowKey(key), [windowMs, nextId(), maxLogEntries]));
    },

    // One permit is a set of one: the same script, so the two cannot drift apart.
    async acquire(key, max, leaseMs): Promise<AcquireResult> {
      const got = await limiter.acquireAll([{ key, max, leaseMs }]);
      return got.ok ? { ok: true, permit: got.permits[0]! } : { ok: false, retryAfterMs: got.retryAfterMs };
    },

    async acquireAll(requests, waiter): Promise<AcquireAllResult> {
      const head: (string | number)[] = waiter
        ? [waiter.id, waiter.lane === "test" ? 1 : 0, Math.max(0, Math.floor(waiter.promoteAfterMs)), graceMs, Math.max(0, Math.floor(waiter.maxRetryAfterMs ?? 0))]
        : ["", 0, 0, graceMs, 0];
      const ids: string[] = [];
      const args: (string | number)[] = [...head];
      const keys: string[] = [];
      for (const r of requests) {
        checkPositiveInt("max", r.max);
        checkPositiveInt("leaseMs", r.leaseMs);
        const id = nextId();
        ids.push(id);
        args.push(r.max, r.leaseMs, id, Math.max(1, Math.ceil(r.releaseEveryMs ?? permitRetryAfterMs)));
        keys.push(permitKey(r.key), lineKey(r.key, "live"), lineKey(r.key, "test"), lineKey(r.key, "until"));
      }
      if (requests.length === 0) return { ok: true, permits: [], release: async () => {} };
      let reply: unknown;
      try {
        reply = await run(ACQUIRE_ALL, keys, args);
      } catch (err) {
        // The script may have run although its answer never came back (the command
        // timeout fired first, e.g. on an event loop held up under load): the slots it
        // may have taken are given back by their ids, on the same connection and so
        // after it. Otherwise they would be held for a caller that was told 503 until
        // their lease ran out. Taken by nobody, the ids are simply not there.
        void quietly(() => run(RELEASE_ALL, requests.map((r) => permitKey(r.key)), ids));
        throw err;
      }
      const [taken, failedIndex, retryAfterMs] = asInts(reply, 3);
      if (taken !== 1) {
        const failed = requests[failedIndex!]!;
        return { ok: false, failedKey: failed.key, failedIndex: failedIndex!, retryAfterMs: retryAfterMs! };
      }
      const held = requests.map((r, i) => makePermit(r.key, ids[i]!, r.leaseMs));
      return {
        ok: true,
        permits: held.map((h) => h.permit),
        async release() {
          // The ones not yet released one by one, in one script call.
          const still = held.filter((h) => h.markReleased());
          if (still.length === 0) return;
          await quietly(() => run(RELEASE_ALL, still.map((h) => permitKey(h.key)), still.map((h) => h.permit.id)));
        },
      };
    },

    async ping() {
      try {
        await ready();
        return (await client.ping()) === "PONG";
      } catch {
        return false;
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      // Calls still waiting for a connection give up now rather than at their timeout.
      for (const wake of waiters) wake();
      waiters.clear();
      if (client.status === "ready") {
        try {
          await client.quit();
          return;
        } catch {
          // fall through: drop the socket
        }
      }
      client.disconnect();
    },
  };
  return limiter;
}

function asInts(reply: unknown, n: number): number[] {
  if (!Array.isArray(reply) || reply.length !== n) {
    // A script/parsing mismatch is a bug (→ 500), not an outage.
    throw new Error(`unexpected reply from limits script: ${JSON.stringify(reply)}`);
  }
  return reply.map(Number);
}
