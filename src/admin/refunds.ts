// Operator route completing a customer's refund request (made in the console, which
// sets the org's refund_pending): pays the money back as a ledger refund entry and
// lifts the refusal of paid calls.
import type { Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../http/api-error.ts";
import type { AppEnv } from "../http/app-env.ts";
import { pathId } from "../http/path-id.ts";
import { jsonBody } from "./json-body.ts";
import { found, unwrap, type AdminDeps } from "./deps.ts";

// Default: everything not reserved by requests in progress.
export const Complete = z.object({ amountKrw: z.number().int().min(0).max(1_000_000_000).optional(), note: z.string().max(200).optional() }).strict();

export function registerRefundRoutes(app: Hono<AppEnv>, d: AdminDeps): void {
  app.post("/orgs/:orgId/refund/complete", async (c) => {
    const orgId = pathId(c, "orgId", "Organization");
    const body = await jsonBody(c, Complete, { required: false });
    const org = found(await d.accounts.getOrg(orgId), "Organization");
    if (!org.refundPending) throw new ApiError("conflict", "No refund is being processed for this organization");
    const amount = body.amountKrw ?? org.availableKrw;
    if (amount > org.availableKrw) throw new ApiError("conflict", "The refund is larger than the available balance");
    if (amount > 0) unwrap(await d.billing.adjust(orgId, "refund", -amount, body.note ?? "refund completed"));
    unwrap(await d.accounts.updateOrg(orgId, { refundPending: false }));
    const after = found(await d.accounts.getOrg(orgId), "Organization");
    return c.json({ orgId, refundedKrw: amount, balanceKrw: after.balanceKrw, refundPending: after.refundPending });
  });
}
