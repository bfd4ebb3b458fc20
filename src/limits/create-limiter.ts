// Picks the implementation: Redis when a URL is configured (several gateway processes
// share limits), otherwise in-process (the embedded single-process default).
import type { Limiter } from "./limiter.ts";
import { createMemoryLimiter } from "./memory-limiter.ts";
import { createRedisLimiter } from "./redis-limiter.ts";

export interface CreateLimiterOptions {
  redisUrl?: string;
  /** Clock for the in-process limiter (ms). The Redis limiter uses Redis server time… */
  now?: () => number;
  /** …unless a test sets the time its scripts see (RedisLimiterOptions.now). */
  redisClock?: () => number;
  /** Redis key prefix (default "pd:limits:"). */
  keyPrefix?: string;
  /** Retry-After hint for refused permits, both implementations (default 1000 ms). */
  permitRetryAfterMs?: number;
  /** Redis connection errors and failed releases. */
  onError?: (err: Error) => void;
  /** How long a refused caller's place in line outlives its Retry-After (default HANDOVER_GRACE_MS). */
  handOverGraceMs?: number;
}

export function createLimiter(options: CreateLimiterOptions = {}): Limiter {
  if (options.redisUrl) {
    return createRedisLimiter({
      url: options.redisUrl,
      keyPrefix: options.keyPrefix,
      permitRetryAfterMs: options.permitRetryAfterMs,
      onError: options.onError,
      handOverGraceMs: options.handOverGraceMs,
      now: options.redisClock,
    });
  }
  return createMemoryLimiter({ now: options.now, permitRetryAfterMs: options.permitRetryAfterMs, handOverGraceMs: options.handOverGraceMs });
}
