// The address used for the per-IP invalid-key guard. X-Forwarded-For is believed only as
// far as TRUST_PROXY says (behind our own proxies); the rule is in http/proxy-trust.ts.
import { clientAddress } from "../http/client-address.ts";
import type { GatewayDeps } from "./deps.ts";

export function clientIp(req: Request, env: unknown, deps: Pick<GatewayDeps, "settings" | "remoteAddress">): string {
  return clientAddress(req.headers.get("x-forwarded-for"), deps.settings.trustProxy, deps.remoteAddress(req, env));
}
