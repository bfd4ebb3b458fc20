// The operator API under /admin/v1: bearer-token protected, JSON in and out, the same
// error envelope as the public API.
import { Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { registerAppRoutes } from "./apps.ts";
import type { AdminDeps } from "./deps.ts";
import { registerKeyRoutes } from "./keys.ts";
import { registerOrgRoutes } from "./orgs.ts";
import { registerProductRoutes } from "./product.ts";
import { registerReconciliationRoute } from "./reconciliation.ts";
import { registerRefundRoutes } from "./refunds.ts";

export function createAdminApp(d: AdminDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", d.operatorGate);
  registerOrgRoutes(app, d);
  registerAppRoutes(app, d);
  registerKeyRoutes(app, d);
  registerProductRoutes(app, d);
  registerRefundRoutes(app, d);
  registerReconciliationRoute(app, d);
  return app;
}
