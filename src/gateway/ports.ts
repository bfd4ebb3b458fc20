// What the gateway needs from the stores, as narrow functions. src/wiring/gateway-ports.ts adapts the
// billing, keys and accounts services to this shape, and tests can see at a glance
// what the gateway touches.
import type { Failure } from "../http/api-error.ts";
import type { RequestLogRow } from "../billing/request-log.ts";
import type { SpendAllowance, SpendLimits } from "../billing/spend-allowance.ts";
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

/** The request-log row is the billing module's own shape (one definition). */
export type { RequestLogRow } from "../billing/request-log.ts";

export interface GatewayPorts {
  /** A suspended key's refusal names whose key it is (its request-log row is its app's). */
  lookupKey(
    text: string,
  ): Promise<{ ok: true; key: KeyContext } | { ok: false; code: "invalid_api_key" } | { ok: false; code: "key_suspended"; owner?: KeyOwnerIds }>;
  touchKey(keyId: string): Promise<void>;
  reserve(h: { requestId: string; orgId: string; appId: string; amountKrw: number }): Promise<{ ok: true } | Failure>;
  /**
   * Like reserve, a refusal is a value; a store outage throws (asked again, src/gateway/capture.ts).
   * The answer also says what the key may still spend after it (X-RateLimit-*), from the
   * capture's own statement, so no spendAllowance read follows a charged call. `logRow`:
   * the call's request-log row, written by the same statement when the charge stands.
   */
  capture(
    requestId: string,
    amountKrw: number,
    key: Pick<KeyContext, "orgId" | "appId" | "lowBalanceWatched" | "spendLimits">,
    logRow?: RequestLogRow,
  ): Promise<{ ok: true; chargedKrw: number; balanceKrw: number; allowance?: SpendAllowance; logged?: boolean } | Failure>;
  release(requestId: string): Promise<void>;
  balances(orgId: string): Promise<{ balanceKrw: number; availableKrw: number }>;
  /** Takes one free call; remaining is what is left after this one. */
  consumeTestCall(q: { orgId: string; lifetime: boolean }): Promise<{ ok: true; remaining: number; period: string } | Failure>;
  /** Gives back a call taken in `period` (what consumeTestCall returned). */
  refundTestCall(q: { orgId: string; period: string }): Promise<void>;
  testCallsRemaining(q: { orgId: string; lifetime: boolean }): Promise<number>;
  /** The tightest spending limit left for a live key (X-RateLimit-* headers); undefined if the app is gone. */
  spendAllowance(q: { orgId: string; appId: string; limits: SpendLimits }): Promise<SpendAllowance | undefined>;
  logRequest(row: RequestLogRow): Promise<void>;
  /** Idempotency-Key claims (src/gateway/idempotency.ts). */
  idempotency: IdempotencyPort;
}
