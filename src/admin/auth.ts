// Operator authentication: "Authorization: Bearer $OPERATOR_TOKEN". The token is compared
// as a SHA-256 digest of fixed length, so neither where a guess differs nor how long the
// token is can be read from response times; wrong tokens are throttled per client
// (token-throttle.ts). Guards the operator API, /metrics and the internal product path.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { errorResponse } from "../http/error-response.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";
import { secretMatcher } from "../keys/index.ts";
import type { TokenThrottle } from "./token-throttle.ts";

export interface OperatorAuth {
  token: string;
  /** One per process, shared by every route the token guards. */
  throttle: TokenThrottle;
  /** The client a request counts as (TRUST_PROXY's rule, src/http/client-address.ts). */
  clientOf: (c: Context) => string;
}

export function operatorAuth({ token, throttle, clientOf }: OperatorAuth): MiddlewareHandler<AppEnv> {
  const matches = secretMatcher(token);
  const unauthorized = (c: Context<AppEnv>) =>
    errorResponse(c.get("requestId"), "unauthorized", undefined, undefined, { "www-authenticate": "Bearer" });
  return async (c, next) => {
    const m = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
    // No token presented is no guess: refused without counting.
    if (!m) return unauthorized(c);
    const client = clientOf(c);
    const wait = throttle.blockedFor(client);
    if (wait > 0) {
      return errorResponse(c.get("requestId"), "rate_limited", "Too many wrong operator tokens from this address", retryAfterSeconds(wait));
    }
    if (!matches(m[1]!)) {
      throttle.wrong(client);
      return unauthorized(c);
    }
    await next();
  };
}
