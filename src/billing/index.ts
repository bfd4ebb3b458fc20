// Public surface of the billing module.
export { createBilling, type Billing, type BillingDeps, type Balances, type AdjustKind, type MovementKind, type Entered } from "./ledger.ts";
export type { ReserveInput, CaptureResult, ReleaseResult } from "./ledger.ts";
export { createTestQuota, TEST_CALLS_PER_PERIOD, type TestQuota, type TestCallQuery, type TestCallTaken } from "./test-quota.ts";
export {
  createRequestLog,
  type RequestLog,
  type RequestLogRow,
  type ListRequestsQuery,
  type DayUsage,
} from "./request-log.ts";
export { kstDay, kstMonth, nextKstMidnight, nextKstMonthStart, secondsUntil } from "./kst.ts";
export {
  reserveAmountForSize,
  priceForPixels,
  PREVIEW_PRICE_KRW,
  FULL_PRICE_KRW,
  PRICE_KRW,
} from "./prices.ts";
export type { SpendNow } from "./spend.ts";
