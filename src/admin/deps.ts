// The services the operator API works through (no SQL in routes).
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import type { Accounts } from "../accounts/index.ts";
import type { Billing, RequestLog } from "../billing/index.ts";
import type { KeyService } from "../keys/index.ts";
import type { ReconciliationService, Refunds } from "../payments/index.ts";
import { ApiError, type Failure } from "../http/api-error.ts";

export interface AdminDeps {
  accounts: Accounts;
  billing: Billing;
  keys: KeyService;
  requestLog: RequestLog;
  /** Money paid back through the provider that took it (only that: src/payments/refunds.ts). */
  refunds: Refunds;
  /** The operator token's check (auth.ts), one per process: /metrics and the product path share its throttle. */
  operatorGate: MiddlewareHandler<AppEnv>;
  /** The provider's records of money against the ledger's (src/payments/reconciliation.ts). */
  reconciliation: ReconciliationService;
}

/** A service result or, for a failure value, the one error path. */
export function unwrap<T extends { ok: true }>(r: T | Failure): T {
  if (!r.ok) throw ApiError.from(r);
  return r;
}

export function found<T>(v: T | null | undefined, what: string): T {
  if (v === null || v === undefined) throw new ApiError("not_found", `${what} not found`);
  return v;
}

/** Drops the `ok` marker from a service result before it is rendered as JSON. */
export function view<T extends { ok?: unknown }>(r: T): Omit<T, "ok"> {
  const { ok: _ok, ...rest } = r;
  return rest;
}
