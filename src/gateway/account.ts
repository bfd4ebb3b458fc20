// GET /v1.0/account (beyond the spec, as the mirrored API has it): what the key's
// organization has left. Free, never charged; the same key errors as removebg.
import type { Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { H } from "../http/headers.ts";
import { newRequestId } from "../http/request-id.ts";
import type { InvalidKeyGuard } from "../limits/index.ts";
import { authenticate } from "./authenticate.ts";
import { clientIp } from "./client-ip.ts";
import type { GatewayDeps } from "./deps.ts";
import { failureResponse } from "../http/error-response.ts";
import { TEST_KEY_SIZE } from "./test-key.ts";

export function registerAccount(app: Hono<AppEnv>, deps: GatewayDeps, guard: InvalidKeyGuard): void {
  app.get("/v1.0/account", async (c) => {
    const requestId = c.get("requestId") ?? newRequestId(deps.now());
    const auth = await authenticate(c.req.header("x-api-key") ?? null, clientIp(c.req.raw, c.env, deps), deps.ports.lookupKey, guard);
    if (!auth.ok) return failureResponse(requestId, auth);
    const key = auth.key;
    const headers = { [H.requestId]: requestId };
    if (key.kind === "test") {
      const remaining = await deps.ports.testCallsRemaining({ orgId: key.orgId, lifetime: key.testQuota === "lifetime" });
      return c.json(
        { data: { kind: "test", testCallsRemaining: remaining, testQuota: key.testQuota } },
        200,
        { ...headers, [H.testSize]: TEST_KEY_SIZE, [H.testRemaining]: String(remaining) },
      );
    }
    const b = await deps.money.balances(key.orgId);
    return c.json({ data: { kind: "live", balanceKrw: b.balanceKrw, availableKrw: b.availableKrw } }, 200, headers);
  });
}
