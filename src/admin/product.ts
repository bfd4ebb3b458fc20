// Operator routes for the product's sale status and for looking up one request.
import type { Hono } from "hono";
import { z } from "zod";
import { PRODUCT_STATUSES } from "../accounts/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { pathId } from "../http/path-id.ts";
import { jsonBody } from "./json-body.ts";
import { found, unwrap, type AdminDeps } from "./deps.ts";

export const PutProduct = z.object({ status: z.enum(PRODUCT_STATUSES) }).strict();

export function registerProductRoutes(app: Hono<AppEnv>, d: AdminDeps): void {
  app.put("/product", async (c) => {
    const body = await jsonBody(c, PutProduct);
    unwrap(await d.accounts.setProductStatus(body.status));
    return c.json({ status: await d.accounts.getProductStatus() });
  });
  app.get("/product", async (c) => c.json({ status: await d.accounts.getProductStatus() }));

  app.get("/requests/:requestId", async (c) => {
    const row = found(await d.requestLog.getRequest(pathId(c, "requestId", "Request")), "Request");
    return c.json({ ...row, receivedAt: new Date(row.receivedAt).toISOString() });
  });
}
