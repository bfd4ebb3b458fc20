// Operator routes for apps: create under an org, patch (product switch, limits).
import type { Hono } from "hono";
import { z } from "zod";
import { APP_DAILY_LIMIT_MAX_KRW, APP_MONTHLY_LIMIT_MAX_KRW, APP_NAME_MAX } from "../accounts/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { pathId } from "../http/path-id.ts";
import { jsonBody } from "./json-body.ts";
import { found, unwrap, view, type AdminDeps } from "./deps.ts";

// Bounds from src/accounts/validate.ts, which the service enforces (one definition).
const name = z.string().min(1).max(APP_NAME_MAX);
const limit = (max: number) => z.number().int().min(0).max(max).nullable().optional();
export const CreateApp = z.object({ name, productEnabled: z.boolean().optional() }).strict();
export const PatchApp = z
  .object({
    productEnabled: z.boolean().optional(),
    dailyLimitKrw: limit(APP_DAILY_LIMIT_MAX_KRW),
    monthlyLimitKrw: limit(APP_MONTHLY_LIMIT_MAX_KRW),
    name: name.optional(),
  })
  .strict();

export function registerAppRoutes(app: Hono<AppEnv>, d: AdminDeps): void {
  app.post("/orgs/:orgId/apps", async (c) => {
    const orgId = pathId(c, "orgId", "Organization");
    const body = await jsonBody(c, CreateApp);
    found(await d.accounts.getOrg(orgId), "Organization");
    const r = unwrap(await d.accounts.createApp(orgId, body));
    return c.json({ appId: r.appId }, 201);
  });

  app.patch("/apps/:appId", async (c) => {
    const appId = pathId(c, "appId", "App");
    const body = await jsonBody(c, PatchApp);
    const existing = found(await d.accounts.getApp(appId), "App");
    if (existing.deletedAt !== null) found(null, "App");
    return c.json(view(unwrap(await d.accounts.updateApp(appId, body))));
  });
}
