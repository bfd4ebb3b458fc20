// "Apply for use": the customer's request that an operator review an app's product.
// The operator's answer is apps.product_enabled (PATCH /admin/v1/apps/{id}); until
// then the app is "in review" and the gateway answers 403 product_not_enabled.
import type { Db } from "../db/index.ts";
import type { ProductStatus } from "./product-status.ts";

export const PRODUCTS = { removebg: "Background removal (POST /v1.0/removebg)" } as const;
export type ProductId = keyof typeof PRODUCTS;

export type AppState = "not_applied" | "in_review" | "enabled" | "discontinued";

export interface ReviewInfo {
  product: ProductId;
  reviewRequestedAt: number | null;
}

export function appState(productEnabled: boolean, reviewRequestedAt: number | null, sale: ProductStatus): AppState {
  if (sale === "discontinued") return "discontinued";
  if (productEnabled) return "enabled";
  return reviewRequestedAt !== null ? "in_review" : "not_applied";
}

export function createAppReview({ db, now }: { db: Db; now: () => number }) {
  async function info(appId: string): Promise<ReviewInfo | null> {
    const rows = await db.query<{ product: ProductId; review_requested_at: number | null }>(
      "SELECT product, review_requested_at FROM apps WHERE app_id = $1",
      [appId],
    );
    return rows[0] ? { product: rows[0].product, reviewRequestedAt: rows[0].review_requested_at } : null;
  }

  /** For the app list: every app of the org at once. */
  async function infoForOrg(orgId: string): Promise<Map<string, ReviewInfo>> {
    const rows = await db.query<{ app_id: string; product: ProductId; review_requested_at: number | null }>(
      "SELECT app_id, product, review_requested_at FROM apps WHERE org_id = $1 AND deleted_at IS NULL",
      [orgId],
    );
    return new Map(rows.map((r) => [r.app_id, { product: r.product, reviewRequestedAt: r.review_requested_at }]));
  }

  /** Records the product choice and the application (the first application time is kept). */
  async function apply(appId: string, product: ProductId): Promise<void> {
    await db.query(
      "UPDATE apps SET product = $2, review_requested_at = COALESCE(review_requested_at, $3) WHERE app_id = $1 AND deleted_at IS NULL",
      [appId, product, new Date(now())],
    );
  }

  return { info, infoForOrg, apply };
}

export type AppReview = ReturnType<typeof createAppReview>;
