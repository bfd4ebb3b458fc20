// Operator route completing a customer's refund request (made in the console, which
// sets the org's refund_pending): pays back money the org paid in through a payment
// provider and has not spent, through that provider, and lifts the refusal of paid
// calls. Credit that was never money (the operator's grants, sandbox top-ups) is not
// paid back; it stays on the balance as credit. A completion that failed part way is
// asked again as it was: what it paid before counts (src/payments/refunds.ts).
import type { Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../http/api-error.ts";
import type { AppEnv } from "../http/app-env.ts";
import { pathId } from "../http/path-id.ts";
import { jsonBody } from "./json-body.ts";
import { found, unwrap, type AdminDeps } from "./deps.ts";

// Default: all that is refundable, within what requests in progress do not hold.
export const Complete = z.object({ amountKrw: z.number().int().min(0).max(1_000_000_000).optional(), note: z.string().max(200).optional() }).strict();

export function registerRefundRoutes(app: Hono<AppEnv>, d: AdminDeps): void {
  app.post("/orgs/:orgId/refund/complete", async (c) => {
    const orgId = pathId(c, "orgId", "Organization");
    const body = await jsonBody(c, Complete, { required: false });
    const org = found(await d.accounts.getOrg(orgId), "Organization");
    if (!org.refundPending) throw new ApiError("conflict", "No refund is being processed for this organization");
    const available = async () => found(await d.accounts.getOrg(orgId), "Organization").availableKrw;
    const done = unwrap(await d.refunds.complete(orgId, body.amountKrw, available, body.note ?? "refund completed"));
    unwrap(await d.accounts.updateOrg(orgId, { refundPending: false }));
    // After the flag: a close that fails leaves the refunds counted towards the next completion (less paid, never more).
    await d.refunds.closeRun(orgId);
    const after = found(await d.accounts.getOrg(orgId), "Organization");
    return c.json({ orgId, refundedKrw: done.refundedKrw, balanceKrw: after.balanceKrw, refundPending: after.refundPending, refunds: done.refunds });
  });
}
