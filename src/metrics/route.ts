// GET /metrics: the Prometheus text exposition of this instance's registry. Who may
// read it is decided by the caller's middleware (app.ts puts the operator token in
// front): counts of calls, charges and errors are business data, not public.
import type { Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import type { Metrics } from "./metrics.ts";

export const METRICS_PATH = "/metrics";

export function registerMetricsRoute(app: Hono<AppEnv>, m: Metrics): void {
  app.get(METRICS_PATH, async (c) => {
    const text = await m.registry.metrics();
    return c.body(text, 200, { "content-type": m.registry.contentType, "cache-control": "no-store" });
  });
}
