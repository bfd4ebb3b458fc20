// What the console needs from a payment provider: start a payment for an amount and,
// after the customer's confirm step, learn whether it went through. Real providers
// (card, bank transfer) would redirect the customer in between; the sandbox does not.
import type { Failure } from "../http/api-error.ts";

export interface PaymentProvider {
  /** Stored with each top-up, so a record says who took the money. */
  readonly name: string;
  start(p: { topupId: string; amountKrw: number }): Promise<{ ok: true; providerRef: string } | Failure>;
  confirm(p: { providerRef: string; amountKrw: number }): Promise<{ ok: true } | Failure>;
}
