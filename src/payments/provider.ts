// What the service needs from a payment provider (docs/DECISIONS.md "Payments"): open a
// payment for a top-up (the customer pays on the provider's page), pay part of a
// payment back, and the provider's word that a payment went through, as a PaymentEvent.
// Money is credited only from such an event (src/payments/topups.ts settle), never from
// the customer's return to the console or anything else a browser sends.
import type { Failure } from "../http/api-error.ts";

export type ProviderName = "stripe" | "sandbox";

/** A refund's state at the provider (Stripe's requires_action counts as pending). */
export type RefundStatus = "pending" | "succeeded" | "failed" | "canceled";

/** A refund as the provider reports it (an event, a list, the answer to ours). */
export interface ProviderRefund {
  /** The provider's ID (Stripe: re_…). */
  ref: string;
  /** The payment it pays back (Stripe: the PaymentIntent), as topups.payment_ref. */
  paymentRef: string;
  amount: number;
  currency: string;
  status: RefundStatus;
  /** Ours: the refund_id we asked under (metadata); absent for a refund made outside our API. */
  refundId?: string;
  failure?: string;
  createdMs: number;
}

/** A dispute (chargeback or inquiry) of a payment. */
export interface ProviderDispute {
  ref: string;
  paymentRef: string;
  amount: number;
  currency: string;
  /** The provider's status (Stripe: warning_needs_response … won, lost). */
  status: string;
  createdMs: number;
}

/** A payment the provider took (Stripe: a Charge). */
export interface ProviderPayment {
  ref: string;
  paymentRef: string;
  amount: number;
  currency: string;
  /** Whether the money was taken (a failed attempt is a Charge too). */
  paid: boolean;
  amountRefunded: number;
  /** Its refunds, when the object carried all of them; undefined: ask refundsOf. */
  refunds?: ProviderRefund[];
  createdMs: number;
}

/** A payment event the provider vouches for (a verified webhook; the sandbox's own approval). */
export type PaymentEvent =
  | {
      kind: "paid";
      eventId: string;
      eventType: string;
      /** The provider's reference of the payment opened by start (Stripe: the Checkout Session). */
      providerRef: string;
      /** The top-up the provider was told the payment is for, when it says. */
      topupId?: string;
      /** What was paid, in the currency's smallest unit (KRW has no smaller one). */
      amount: number;
      currency: string;
      /** The provider's reference of the money itself, for a refund (Stripe: the PaymentIntent). */
      paymentRef?: string;
    }
  | { kind: "failed"; eventId: string; eventType: string; providerRef: string; topupId?: string; reason: string }
  /** A dispute opened, changed or closed: src/payments/money-events.ts. */
  | { kind: "dispute"; eventId: string; eventType: string; dispute: ProviderDispute }
  /** A refund made, changed, failed (ours or one made outside our API). */
  | { kind: "refund"; eventId: string; eventType: string; refund: ProviderRefund }
  /** A payment (partly) refunded: its refunds, each entered once. */
  | { kind: "charge_refunded"; eventId: string; eventType: string; payment: ProviderPayment }
  /** Not about money we track; `unreadable`: a money event whose object is not as documented. */
  | { kind: "other"; eventId: string; eventType: string; unreadable?: string };

/** The provider's refusal of a refund: `refused` when it said it made none, false when the outcome is unknown (no answer, a 5xx). */
export type RefundRefusal = Failure & { refused: boolean };

/** What the provider recorded as created within a time range (src/payments/reconciliation.ts). */
export interface ProviderRecords {
  payments: ProviderPayment[];
  refunds: ProviderRefund[];
  disputes: ProviderDispute[];
}

export interface PaymentProvider {
  readonly name: ProviderName;
  /** Whether it takes real money. Only such top-ups are ever paid back as money (refunds.ts). */
  readonly takesMoney: boolean;
  /** Opens a payment: the provider's reference, and where the customer goes to pay. */
  start(p: { topupId: string; amountKrw: number; returnUrl: string; cancelUrl: string }): Promise<{ ok: true; providerRef: string; payUrl: string } | Failure>;
  /** Pays back part of a payment it took, naming our refund (refundId) so it can be found again. */
  refund(p: { paymentRef: string; amountKrw: number; refundId: string; idempotencyKey: string }): Promise<{ ok: true; refund: ProviderRefund } | RefundRefusal>;
  /** Every refund of one payment (by the payment's or the charge's reference), read from the provider. */
  refundsOf?(p: { paymentRef?: string; chargeRef?: string }): Promise<{ ok: true; refunds: ProviderRefund[] } | Failure>;
  /** Payments, refunds and disputes created in [fromMs, toMs), read from the provider. */
  records?(fromMs: number, toMs: number): Promise<({ ok: true } & ProviderRecords) | Failure>;
}
