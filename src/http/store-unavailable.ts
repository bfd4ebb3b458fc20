// "A store is down → 503" (interface spec §7 service_unavailable), mapped here only.
// Failures of our own stores (Postgres, Redis) are not the client's fault and not a
// bug in the request: the answer is 503 service_unavailable with Retry-After, and the
// service recovers by itself when the store is back. The gateway's own catch, the
// shared error handler (src/http/middleware.ts, for every other route) and the
// stores' retry loops (capture, log writes, the reconciler) all ask this module.
import { isDbUnavailable } from "../db/errors.ts";
import { isLimiterUnavailable } from "../limits/limiter.ts";
import { fail, type Failure } from "./api-error.ts";

/** Seconds a client is asked to wait: a restart or a failover is usually over by then or soon after. */
export const STORE_RETRY_AFTER_S = 5;

export function isStoreUnavailable(err: unknown): boolean {
  return isLimiterUnavailable(err) || isDbUnavailable(err);
}

/** The one answer to a store outage, or undefined when `err` is something else. */
export function storeUnavailable(err: unknown): Failure | undefined {
  return isStoreUnavailable(err) ? fail("service_unavailable", "A backing store is unavailable", STORE_RETRY_AFTER_S) : undefined;
}
