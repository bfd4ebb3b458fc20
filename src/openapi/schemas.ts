// Response bodies as zod schemas. The handlers build these objects inline, so the
// shapes are written down here once: the document publishes them (z.toJSONSchema)
// and test/openapi parses real answers with them, which is what keeps them true.
import { z } from "zod";
import { PRODUCT_STATUSES } from "../accounts/index.ts";
import { ERRORS, type ErrorCode } from "../http/error-catalogue.ts";

const krw = z.number().int().min(0);
/** A balance: below zero when the payment provider took money back (a dispute, a refund in its dashboard). */
const balanceKrw = z.number().int().describe("In KRW; below zero when the payment provider took money back (a chargeback, a refund made in its dashboard).");
const isoTime = z.iso.datetime();

export const ErrorEnvelope = z
  .object({
    errors: z
      .array(
        z.object({ title: z.string(), code: z.enum(Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]) }).strict(),
      )
      .length(1),
  })
  .strict()
  .describe("The one error body of the service. The `code` is stable; the `title` is for people and may change.");

export const RemoveBgJson = z
  .object({
    data: z
      .object({
        result_b64: z.string().describe("The PNG result, base64-encoded."),
        foreground_top: z.number().int().min(0),
        foreground_left: z.number().int().min(0),
        foreground_width: z.number().int().min(0),
        foreground_height: z.number().int().min(0),
      })
      .strict(),
  })
  .strict()
  .describe("The mirrored API's JSON form, sent when the request's Accept prefers application/json over images.");

export const AccountInfo = z
  .object({
    data: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("live"), balanceKrw, availableKrw: balanceKrw.describe("Balance less amounts held by requests in progress.") }).strict(),
      z
        .object({ kind: z.literal("test"), testCallsRemaining: z.number().int().min(0), testQuota: z.enum(["monthly", "lifetime"]) })
        .strict(),
    ]),
  })
  .strict();

export const Healthy = z.object({ status: z.literal("ok") }).strict();

export const Readiness = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    checks: z.record(z.string(), z.looseObject({ ok: z.boolean() })).describe("One entry per part (database, limiter, models), with details."),
  })
  .strict();

export const OrgCreated = z.object({ orgId: z.string(), userId: z.string() }).strict();

export const OrgView = z
  .object({
    orgId: z.string(),
    ownerUserId: z.string(),
    balanceKrw,
    availableKrw: balanceKrw,
    dailyLimitKrw: krw,
    refundPending: z.boolean(),
    testQuota: z.enum(["monthly", "lifetime"]),
  })
  .strict();

export const BalanceAfter = z.object({ balanceKrw }).strict();

export const AppCreated = z.object({ appId: z.string() }).strict();

export const AppView = z
  .object({
    appId: z.string(),
    orgId: z.string(),
    name: z.string(),
    productEnabled: z.boolean(),
    dailyLimitKrw: krw.nullable(),
    monthlyLimitKrw: krw.nullable(),
    createdAt: z.number().int().describe("Milliseconds since the epoch."),
    deletedAt: z.number().int().nullable(),
  })
  .strict();

export const KeyIssued = z
  .object({ keyId: z.string(), key: z.string().regex(/^pd_(test|live)_/).describe("The key text: shown only in this answer.") })
  .strict();

export const KeyReissued = KeyIssued.extend({
  previousValidUntil: isoTime.describe("The replaced key stays valid until then (7 days)."),
}).strict();

export const KeyView = z
  .object({
    keyId: z.string(),
    appId: z.string(),
    kind: z.enum(["test", "live"]),
    label: z.string(),
    createdAt: isoTime,
    lastUsedAt: isoTime.nullable(),
    validUntil: isoTime.nullable(),
    suspended: z.boolean(),
    replacedBy: z.string().nullable(),
  })
  .strict();

export const ProductStatus = z.object({ status: z.enum(PRODUCT_STATUSES) }).strict();

const nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();
export const RequestRecord = z
  .object({
    requestId: z.string(),
    receivedAt: isoTime,
    orgId: nullable(z.string()),
    appId: nullable(z.string()),
    keyId: nullable(z.string()),
    keyKind: nullable(z.enum(["test", "live"])),
    tier: nullable(z.enum(["preview", "full"])),
    status: z.number().int(),
    errorCode: nullable(z.string()),
    chargedKrw: krw,
    processingMs: nullable(z.number().int()),
    attempts: z.number().int().min(0),
    ip: nullable(z.string()),
    width: nullable(z.number().int()),
    height: nullable(z.number().int()),
  })
  .strict();

export const RefundCompleted = z
  .object({
    orgId: z.string(),
    refundedKrw: krw.describe("Paid back by this completion (pending or paid at the provider), counting earlier tries of it."),
    balanceKrw,
    refundPending: z.boolean(),
    refunds: z
      .array(
        z
          .object({
            refundId: z.string(),
            topupId: z.string(),
            amountKrw: krw,
            state: z.enum(["requested", "pending", "succeeded", "failed", "canceled"]).describe("pending: the provider has it and has not paid yet; failed or canceled: the amount is back on the balance."),
          })
          .strict(),
      )
      .describe("The completion's refunds, one per top-up paid back."),
  })
  .strict();

const totals = z.object({ paymentsKrw: krw, refundsKrw: krw, disputesKrw: krw.describe("Withheld for disputes not won.") }).strict();
const difference = z
  .object({
    kind: z.enum(["payment", "refund", "dispute"]),
    orgId: z.string().nullable(),
    providerRef: z.string().nullable().describe("The provider's record (Stripe: ch_…, re_…, du_…)."),
    ledgerRef: z.string().nullable().describe("What the ledger entered it under: the top-up, refund or dispute ID."),
    providerKrw: z.number().int().describe("What the provider's record says the ledger holds for it: a credit > 0, money taken off < 0."),
    ledgerKrw: z.number().int().describe("What the ledger holds for it."),
    reason: z.string(),
  })
  .strict();

export const ReconciliationReport = z
  .object({
    from: isoTime,
    to: isoTime,
    provider: z.string().describe("The payment provider read (`none` where none is configured: nothing to read)."),
    organizations: z.array(z.object({ orgId: z.string(), provider: totals, ledger: totals, differences: z.array(difference) }).strict()),
    unmatched: z.array(difference).describe("Provider records no organization of ours can be named for."),
    differenceCount: z.number().int().min(0),
  })
  .strict();
