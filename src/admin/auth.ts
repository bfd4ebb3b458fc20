// Operator authentication: "Authorization: Bearer $OPERATOR_TOKEN", compared in
// constant time so the token cannot be learnt byte by byte from response times.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { errorResponse } from "../http/error-response.ts";
import { constantTimeEqual } from "../keys/index.ts";

export function operatorAuth(token: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const m = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
    if (!m || !constantTimeEqual(m[1], token)) {
      return errorResponse(c.get("requestId"), "unauthorized", undefined, undefined, { "www-authenticate": "Bearer" });
    }
    await next();
  };
}
