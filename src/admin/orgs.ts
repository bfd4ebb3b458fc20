// Operator routes for organizations: create (verified owner + org), read, patch, credit.
import type { Hono } from "hono";
import { z } from "zod";
import { ORG_DAILY_LIMIT_MAX_KRW } from "../accounts/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { pathId } from "../http/path-id.ts";
import { jsonBody } from "./json-body.ts";
import { found, unwrap, view, type AdminDeps } from "./deps.ts";

export const CreateOrg = z.object({ email: z.string().min(3).max(254) }).strict();
export const PatchOrg = z
  .object({
    dailyLimitKrw: z.number().int().min(0).max(ORG_DAILY_LIMIT_MAX_KRW).optional(),
    refundPending: z.boolean().optional(),
    testQuota: z.enum(["monthly", "lifetime"]).optional(),
  })
  .strict();
export const Credit = z.object({ amountKrw: z.number().int().positive().max(1_000_000_000) }).strict();

export function registerOrgRoutes(app: Hono<AppEnv>, d: AdminDeps): void {
  const orgView = async (orgId: string) => {
    const o = found(await d.accounts.getOrg(orgId), "Organization");
    return {
      orgId: o.orgId,
      ownerUserId: o.ownerUserId,
      balanceKrw: o.balanceKrw,
      availableKrw: o.availableKrw,
      dailyLimitKrw: o.dailyLimitKrw,
      refundPending: o.refundPending,
      testQuota: o.testQuota,
    };
  };

  app.post("/orgs", async (c) => {
    const body = await jsonBody(c, CreateOrg);
    const r = unwrap(await d.accounts.createOrgWithOwner(body.email, { verified: true }));
    return c.json({ orgId: r.orgId, userId: r.userId }, 201);
  });

  app.get("/orgs/:orgId", async (c) => c.json(await orgView(pathId(c, "orgId", "Organization"))));

  app.patch("/orgs/:orgId", async (c) => {
    const orgId = pathId(c, "orgId", "Organization");
    const body = await jsonBody(c, PatchOrg);
    found(await d.accounts.getOrg(orgId), "Organization");
    unwrap(await d.accounts.updateOrg(orgId, body));
    return c.json(await orgView(orgId));
  });

  app.post("/orgs/:orgId/credit", async (c) => {
    const orgId = pathId(c, "orgId", "Organization");
    const body = await jsonBody(c, Credit);
    const r = unwrap(await d.billing.credit(orgId, body.amountKrw, "operator credit"));
    return c.json(view(r));
  });
}
