// Stripe's money objects, as its API reference documents them, read into our words
// (provider.ts): a Refund, a Dispute, a Charge. Used for webhook events
// (stripe-webhook.ts) and for what the API's list endpoints answer (stripe.ts). A field
// missing or of the wrong type makes the object unreadable (undefined): never a guess.
// KRW is zero-decimal at Stripe: amounts are whole won.
import type { ProviderDispute, ProviderPayment, ProviderRefund, RefundStatus } from "./provider.ts";

type Obj = Record<string, unknown>;

export function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** An ID field that may also come expanded into its object. */
function idOf(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  return isObject(v) && typeof v.id === "string" ? v.id : undefined;
}

const whole = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const createdMs = (o: Obj): number => (whole(o.created) ? o.created * 1000 : 0);

/** Stripe's refund statuses; requires_action (the customer must act first) is still pending. */
const REFUND_STATUS: Record<string, RefundStatus> = {
  pending: "pending",
  requires_action: "pending",
  succeeded: "succeeded",
  failed: "failed",
  canceled: "canceled",
};

/** A Refund: `re_…`, its PaymentIntent, amount, status; metadata.refund_id when we asked for it. */
export function stripeRefund(o: unknown): ProviderRefund | undefined {
  if (!isObject(o) || o.object !== "refund" || typeof o.id !== "string") return undefined;
  const paymentRef = idOf(o.payment_intent);
  const status = typeof o.status === "string" ? REFUND_STATUS[o.status] : undefined;
  if (!paymentRef || !whole(o.amount) || typeof o.currency !== "string" || !status) return undefined;
  const meta = isObject(o.metadata) ? o.metadata : {};
  const r: ProviderRefund = { ref: o.id, paymentRef, amount: o.amount, currency: o.currency.toLowerCase(), status, createdMs: createdMs(o) };
  if (typeof meta.refund_id === "string" && meta.refund_id !== "") r.refundId = meta.refund_id;
  if (typeof o.failure_reason === "string") r.failure = o.failure_reason;
  return r;
}

/** A Dispute: `du_…`, the disputed PaymentIntent, amount, status. */
export function stripeDispute(o: unknown): ProviderDispute | undefined {
  if (!isObject(o) || o.object !== "dispute" || typeof o.id !== "string") return undefined;
  const paymentRef = idOf(o.payment_intent);
  if (!paymentRef || !whole(o.amount) || o.amount === 0 || typeof o.currency !== "string" || typeof o.status !== "string") return undefined;
  return { ref: o.id, paymentRef, amount: o.amount, currency: o.currency.toLowerCase(), status: o.status, createdMs: createdMs(o) };
}

/**
 * A Charge: `ch_…`, its PaymentIntent, amount, amount_refunded. `refunds` is a list
 * object only where the API version or an expansion includes it; it counts as complete
 * only when the list says it has no more.
 */
export function stripeCharge(o: unknown): ProviderPayment | undefined {
  if (!isObject(o) || o.object !== "charge" || typeof o.id !== "string") return undefined;
  const paymentRef = idOf(o.payment_intent);
  if (!paymentRef || !whole(o.amount) || !whole(o.amount_refunded) || typeof o.currency !== "string") return undefined;
  const p: ProviderPayment = {
    ref: o.id,
    paymentRef,
    amount: o.amount,
    currency: o.currency.toLowerCase(),
    paid: o.paid === true && o.status === "succeeded",
    amountRefunded: o.amount_refunded,
    createdMs: createdMs(o),
  };
  const list = o.refunds;
  if (isObject(list) && list.object === "list" && Array.isArray(list.data) && list.has_more === false) {
    const refunds = list.data.map(stripeRefund);
    if (refunds.every((r) => r !== undefined)) p.refunds = refunds as ProviderRefund[];
  }
  return p;
}
