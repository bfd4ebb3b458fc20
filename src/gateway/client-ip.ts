// The address used for the per-IP invalid-key guard. X-Forwarded-For is believed only
// when TRUST_PROXY is set (behind our own load balancer); otherwise anyone could
// dodge the guard by inventing the header.
import type { GatewayDeps } from "./deps.ts";

export function clientIp(req: Request, env: unknown, deps: Pick<GatewayDeps, "settings" | "remoteAddress">): string {
  if (deps.settings.trustProxy) {
    const fwd = req.headers.get("x-forwarded-for");
    const first = fwd?.split(",")[0]?.trim();
    if (first) return first;
  }
  return deps.remoteAddress(req, env) ?? "unknown";
}
