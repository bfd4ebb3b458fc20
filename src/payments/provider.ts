// What the service needs from a payment provider (docs/DECISIONS.md "Payments"): open a
// payment for a top-up (the customer pays on the provider's page), pay part of a
// payment back, and the provider's word that a payment went through, as a PaymentEvent.
// Money is credited only from such an event (src/payments/topups.ts settle), never from
// the customer's return to the console or anything else a browser sends.
import type { Failure } from "../http/api-error.ts";

export type ProviderName = "stripe" | "sandbox";

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
  | { kind: "other"; eventId: string; eventType: string };

export interface PaymentProvider {
  readonly name: ProviderName;
  /** Whether it takes real money. Only such top-ups are ever paid back as money (refunds.ts). */
  readonly takesMoney: boolean;
  /** Opens a payment: the provider's reference, and where the customer goes to pay. */
  start(p: { topupId: string; amountKrw: number; returnUrl: string; cancelUrl: string }): Promise<{ ok: true; providerRef: string; payUrl: string } | Failure>;
  /** Pays back part of a payment it took; the same idempotency key never pays twice. */
  refund(p: { paymentRef: string; amountKrw: number; idempotencyKey: string }): Promise<{ ok: true; refundRef: string } | Failure>;
}
