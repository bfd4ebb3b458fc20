// One middleware for what every request leaves behind: the request counter and
// duration histogram, the in-flight gauge (which shutdown also reads), and one access
// log line carrying the request ID. Labels and the log line name the route *pattern*
// (`/admin/v1/orgs/:orgId`), never the raw path or query string: a query may carry a
// key sent in the wrong place, and raw paths would make unbounded label values.
import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AppEnv } from "../http/app-env.ts";
import { errorCodeOf } from "../http/error-response.ts";
import type { Metrics } from "./metrics.ts";

/** Polled by load balancers and Prometheus every few seconds: logged at debug only. */
const QUIET_ROUTES: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

const METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export function httpMetrics(m: Metrics, log: (e: Record<string, unknown>) => void, now: () => number = performance.now.bind(performance)): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const t0 = now();
    m.httpInFlight.inc();
    try {
      await next();
    } finally {
      m.httpInFlight.dec();
    }
    const seconds = (now() - t0) / 1000;
    const route = routeOf(c);
    const method = METHODS.has(c.req.method) ? c.req.method : "OTHER";
    const status = c.res.status;
    // Every error envelope is built by errorResponse, which tags the answer with its code.
    const code = status >= 400 ? errorCodeOf(c.res) : undefined;
    m.httpRequests.inc([route, method, String(status), code ?? "none"]);
    m.httpDuration.observe([route, method], seconds);
    log({
      level: QUIET_ROUTES.has(route) && status < 400 ? "debug" : "info",
      msg: "request",
      requestId: c.get("requestId"),
      method,
      route,
      status,
      ...(code ? { code } : {}),
      ms: Math.round(seconds * 1000),
    });
  };
}

/** The registered pattern that answered; "unmatched" for a 404 that matched nothing. */
function routeOf(c: Context<AppEnv>): string {
  const p = routePath(c);
  return p === "" || p === "*" || p === "/*" ? "unmatched" : p;
}
