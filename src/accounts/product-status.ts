// Whether the product is on sale, set by the operator: available, discontinued
// (403 product_discontinued) or maintenance (503 service_unavailable). One row.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";

export const PRODUCT_STATUSES = ["available", "discontinued", "maintenance"] as const;
export type ProductStatus = (typeof PRODUCT_STATUSES)[number];

/** The stored switch (null or unknown: no row) as a status: without its row the product is available. */
export function productStatusOf(stored: string | null | undefined): ProductStatus {
  return (PRODUCT_STATUSES as readonly string[]).includes(stored ?? "") ? (stored as ProductStatus) : "available";
}

export function createProductStatus({ db, now }: { db: Db; now: () => number }) {
  async function getProductStatus(): Promise<ProductStatus> {
    const rows = await db.query<{ status: string }>("SELECT status FROM product_status WHERE singleton");
    return productStatusOf(rows[0]?.status);
  }

  async function setProductStatus(status: ProductStatus): Promise<{ ok: true } | Failure> {
    if (!(PRODUCT_STATUSES as readonly string[]).includes(status)) return fail("invalid_parameter", `Status must be one of ${PRODUCT_STATUSES.join(", ")}`);
    await db.query(
      `INSERT INTO product_status (singleton, status, updated_at) VALUES (true, $1, $2)
       ON CONFLICT (singleton) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at`,
      [status, new Date(now())],
    );
    return { ok: true };
  }

  return { getProductStatus, setProductStatus };
}
