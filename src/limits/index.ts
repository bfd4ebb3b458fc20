// Public surface of the limits area; the gateway and src/wiring import from here.
export {
  DEFAULT_MAX_LOG_ENTRIES,
  DEFAULT_PERMIT_RETRY_AFTER_MS,
  LimiterUnavailableError,
  isLimiterUnavailable,
  type AcquireResult,
  type HitResult,
  type Limiter,
  type OverResult,
  type Permit,
} from "./limiter.ts";
export { createLimiter, type CreateLimiterOptions } from "./create-limiter.ts";
export { createMemoryLimiter, type MemoryLimiterOptions } from "./memory-limiter.ts";
export { createRedisLimiter, DEFAULT_KEY_PREFIX, type RedisLimiterOptions } from "./redis-limiter.ts";
export type { AcquireAllResult, PermitRequest, PermitSet, Waiter } from "./acquire-all.ts";
export { HANDOVER_GRACE_MS } from "./waiting-line.ts";
export {
  createInvalidKeyGuard,
  retryAfterSeconds,
  type InvalidKeyGuard,
  type InvalidKeyGuardOptions,
} from "./invalid-key-guard.ts";
