// What the gateway needs from the stores, as narrow functions. src/wiring/gateway-ports.ts adapts the
// keys, test-quota and request-log services to this shape; the money of a paid call is
// billing's own adapter (src/billing/call-money.ts), seen here as MoneyPort. Tests can
// see at a glance what the gateway touches.
import type { Failure } from "../http/api-error.ts";
import type { RequestLogRow } from "../billing/request-log.ts";
import type { SpendLimits } from "../billing/spend-allowance.ts";
import type { CallMoney } from "../billing/call-money.ts";
import type { IdempotencyPort } from "./idempotency.ts";
import type { ProductStatus } from "../accounts/product-status.ts";

export interface KeyContext {
  keyId: string;
  kind: "test" | "live";
  /** "pd_live_AbCd…wXyZ" style label: safe to log. */
  label: string;
  appId: string;
  orgId: string;
  productEnabled: boolean;
  refundPending: boolean;
  testQuota: "monthly" | "lifetime";
  /** The operator's sale switch, read in the key's own lookup (one round trip). */
  productStatus: ProductStatus;
  /** The spending limits as the key's lookup read them: X-RateLimit-* then needs only the counters. */
  spendLimits: SpendLimits;
  /** A low-balance e-mail is asked for and not yet sent: the capture checks the balance against it. */
  lowBalanceWatched: boolean;
}

/** Whose a key is: what a refusal of a known key (a suspended one) records. */
export type KeyOwnerIds = Pick<KeyContext, "keyId" | "kind" | "appId" | "orgId">;

/** The spending limits' shape is the billing module's own (one definition). */
export type { SpendLimits } from "../billing/spend-allowance.ts";

/** The operator's switch (src/accounts/product-status.ts owns the values). */
export type { ProductStatus } from "../accounts/product-status.ts";

/** Reserve, capture, release and the spending allowance of one paid call: billing's adapter. */
export type MoneyPort = CallMoney;

/** The request-log row is the billing module's own shape (one definition). */
export type { RequestLogRow } from "../billing/request-log.ts";

export interface GatewayPorts {
  /** A suspended key's refusal names whose key it is (its request-log row is its app's). */
  lookupKey(
    text: string,
  ): Promise<{ ok: true; key: KeyContext } | { ok: false; code: "invalid_api_key" } | { ok: false; code: "key_suspended"; owner?: KeyOwnerIds }>;
  touchKey(keyId: string): Promise<void>;
  /** Takes one free call; remaining is what is left after this one. */
  consumeTestCall(q: { orgId: string; lifetime: boolean; requestId?: string }): Promise<{ ok: true; remaining: number; period: string } | Failure>;
  /** Gives back a call taken in `period` (what consumeTestCall returned), by its request ID when it was taken with one. */
  refundTestCall(q: { orgId: string; period: string; requestId?: string }): Promise<void>;
  testCallsRemaining(q: { orgId: string; lifetime: boolean }): Promise<number>;
  logRequest(row: RequestLogRow): Promise<void>;
  /** Idempotency-Key claims (src/gateway/idempotency.ts). */
  idempotency: IdempotencyPort;
}
