// Public surface of the payments module.
export type { PaymentEvent, PaymentProvider, ProviderName } from "./provider.ts";
export { createSandboxProvider, isSandbox, type SandboxProvider } from "./sandbox.ts";
export { createStripeProvider, type StripeOptions } from "./stripe.ts";
export { STRIPE_SIGNATURE_TOLERANCE_S, STRIPE_WEBHOOK_MAX_BYTES, verifyStripeWebhook } from "./stripe-webhook.ts";
export { registerStripeWebhook, STRIPE_WEBHOOK_PATH } from "./webhook-route.ts";
export { createRefunds, REFUND_RESEND_AFTER_MS, type Refunds, type RefundView } from "./refunds.ts";
export { createTopups, MAX_OPEN_TOPUPS, TOPUP_OPEN_WINDOW_MS, TOPUP_AMOUNTS_KRW, type SettleOutcome, type Topups, type Topup, type TopupDeps, type TopupState } from "./topups.ts";
export { checkRange, createReconciliation, MATCH_MARGIN_MS, RECONCILIATION_MAX_DAYS, type Difference, type OrgReconciliation, type Reconciliation, type ReconciliationService } from "./reconciliation.ts";
export type { ProviderDispute, ProviderPayment, ProviderRecords, ProviderRefund, RefundStatus } from "./provider.ts";
