// The public API routes: POST /v1.0/removebg and GET /v1.0/account.
import { Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { errorResponse } from "../http/error-response.ts";
import { invalidKeyGuard } from "./authenticate.ts";
import { registerAccount } from "./account.ts";
import type { GatewayDeps } from "./deps.ts";
import { registerRemoveBg } from "./removebg.ts";

export function createGatewayApp(deps: GatewayDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const guard = invalidKeyGuard(deps);
  registerRemoveBg(app, deps, guard);
  registerAccount(app, deps, guard);
  app.all("/v1.0/removebg", (c) =>
    errorResponse(c.get("requestId"), "method_not_allowed", "Use POST for /v1.0/removebg", undefined, { allow: "POST" }),
  );
  return app;
}
