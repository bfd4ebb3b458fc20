// GET /admin/v1/reconciliation?from=&to=: the payment provider's records of payments,
// refunds and disputes against the ledger's entries, per organization, with every
// difference (src/payments/reconciliation.ts). The range is checked before the
// provider is read: both ends required, dates or date-times with a zone, at most
// RECONCILIATION_MAX_DAYS apart; nothing else in the query.
import type { Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../http/api-error.ts";
import type { AppEnv } from "../http/app-env.ts";
import { checkRange, RECONCILIATION_MAX_DAYS } from "../payments/index.ts";
import { unwrap, view, type AdminDeps } from "./deps.ts";

export { RECONCILIATION_MAX_DAYS };

/** A day (its 00:00 UTC) or an RFC 3339 date-time with Z or an offset. */
export const Instant = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/** The query, as the document publishes it. */
const INSTANT_SCHEMA = (() => {
  const s = z.toJSONSchema(Instant) as Record<string, unknown>;
  delete s.$schema;
  return s;
})();
export const RECONCILIATION_QUERY = [
  {
    name: "from",
    description: "Start of the range, included: a day (`2025-05-01`, 00:00 UTC) or a date-time with a zone (`2025-05-01T00:00:00+09:00`).",
    required: true,
    schema: INSTANT_SCHEMA,
    example: "2025-05-01",
  },
  { name: "to", description: `End of the range, excluded; at most ${RECONCILIATION_MAX_DAYS} days after from.`, required: true, schema: INSTANT_SCHEMA, example: "2025-05-31" },
];

function instant(all: Record<string, string[]>, name: "from" | "to"): number {
  const values = all[name] ?? [];
  if (values.length !== 1) throw new ApiError("invalid_parameter", `${name} is required once (a day such as 2025-05-01, or a date-time with a zone)`);
  const text = values[0]!;
  const ms = text.length <= 40 && Instant.safeParse(text).success ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms)) throw new ApiError("invalid_parameter", `${name} must be a day such as 2025-05-01 or a date-time with a zone such as 2025-05-01T00:00:00Z`);
  return ms;
}

export function registerReconciliationRoute(app: Hono<AppEnv>, d: AdminDeps): void {
  app.get("/reconciliation", async (c) => {
    const all = c.req.queries();
    const unknown = Object.keys(all).filter((k) => k !== "from" && k !== "to");
    if (unknown.length) throw new ApiError("invalid_parameter", `Unknown query parameter ${unknown[0]!.slice(0, 40)}: only from and to`);
    const from = instant(all, "from");
    const to = instant(all, "to");
    const wrong = checkRange(from, to);
    if (wrong) throw ApiError.from(wrong);
    return c.json(view(unwrap(await d.reconciliation.reconcile(from, to))));
  });
}
