// Stripe's webhook, as Stripe documents its signing ("Verify webhook signatures"):
// the Stripe-Signature header is `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, where each v1 is
// HMAC-SHA256, keyed with the endpoint's signing secret (whsec_…), of `<t>.<raw body>`.
// An event is acted on only if one v1 matches (compared by the platform's constant-time
// HMAC verify) and t is within the tolerance of our clock: a captured delivery cannot
// be replayed later, and one replayed within the window is an event ID already acted on
// (payment_events, topups.ts). The body is read as bytes: any re-encoding breaks the MAC.
import type { PaymentEvent } from "./provider.ts";
import { isObject, stripeCharge, stripeDispute, stripeRefund } from "./stripe-objects.ts";

/** Stripe's own libraries' default: five minutes either way. */
export const STRIPE_SIGNATURE_TOLERANCE_S = 300;
/** A Checkout Session or Charge event is a few kB; anything far larger is not Stripe's. */
export const STRIPE_WEBHOOK_MAX_BYTES = 64 * 1024;

export type Verified = { ok: true; event: PaymentEvent } | { ok: false; reason: string };

export async function verifyStripeWebhook(raw: Uint8Array, header: string | null, secret: string, nowMs: number): Promise<Verified> {
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: "Stripe-Signature is missing or malformed" };
  if (Math.abs(nowMs / 1000 - parsed.t) > STRIPE_SIGNATURE_TOLERANCE_S) return { ok: false, reason: "Stripe-Signature is outside the time tolerance" };
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const signed = concat(new TextEncoder().encode(`${parsed.t}.`), raw);
  let matched = false;
  for (const sig of parsed.v1) {
    if (await crypto.subtle.verify("HMAC", key, sig, signed)) matched = true;
  }
  if (!matched) return { ok: false, reason: "no Stripe-Signature v1 signature matches the body" };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    return { ok: false, reason: "the body is not JSON" };
  }
  const event = toPaymentEvent(json);
  return event ? { ok: true, event } : { ok: false, reason: "the body is not a Stripe event" };
}

/** t and the v1 signatures (other schemes, such as v0 for test events, are ignored as Stripe says). */
function parseSignatureHeader(header: string | null): { t: number; v1: Uint8Array<ArrayBuffer>[] } | undefined {
  if (!header || header.length > 2048) return undefined;
  let t: number | undefined;
  const v1: Uint8Array<ArrayBuffer>[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === "t" && /^\d{1,12}$/.test(value)) t = Number(value);
    if (name === "v1" && /^[0-9a-f]{64}$/i.test(value) && v1.length < 8) v1.push(hexBytes(value));
  }
  return t !== undefined && v1.length > 0 ? { t, v1 } : undefined;
}

/** Events whose object is a Dispute, a Refund or a Charge (Stripe's event types reference). */
const DISPUTE_EVENTS = new Set(["charge.dispute.created", "charge.dispute.updated", "charge.dispute.closed", "charge.dispute.funds_withdrawn", "charge.dispute.funds_reinstated"]);
const REFUND_EVENTS = new Set(["refund.created", "refund.updated", "refund.failed", "charge.refund.updated"]);

/**
 * The events in our words: the Checkout Session's (the payment), a dispute's, a
 * refund's and charge.refunded. Every other type is "other"; a money event whose object
 * is not as Stripe documents it is "other" and named unreadable, for the operator.
 */
function toPaymentEvent(json: unknown): PaymentEvent | undefined {
  if (!isObject(json) || typeof json.id !== "string" || typeof json.type !== "string" || !isObject(json.data) || !isObject(json.data.object)) return undefined;
  const eventId = json.id;
  const eventType = json.type;
  const o = json.data.object;
  const unreadable = (what: string): PaymentEvent => ({ kind: "other", eventId, eventType, unreadable: `the event's object is not a ${what} as Stripe documents it` });
  if (DISPUTE_EVENTS.has(eventType)) {
    const dispute = stripeDispute(o);
    return dispute ? { kind: "dispute", eventId, eventType, dispute } : unreadable("Dispute");
  }
  if (REFUND_EVENTS.has(eventType)) {
    const refund = stripeRefund(o);
    return refund ? { kind: "refund", eventId, eventType, refund } : unreadable("Refund");
  }
  if (eventType === "charge.refunded") {
    const payment = stripeCharge(o);
    return payment ? { kind: "charge_refunded", eventId, eventType, payment } : unreadable("Charge");
  }
  if (!eventType.startsWith("checkout.session.")) return { kind: "other", eventId, eventType };
  return checkoutEvent(eventId, eventType, o);
}

/**
 * A Checkout Session event. Completed with payment_status "paid" (a card, a wallet) and
 * async_payment_succeeded (a method that settles later) are the payment; completed
 * while "unpaid" waits for the latter.
 */
function checkoutEvent(eventId: string, eventType: string, s: Record<string, unknown>): PaymentEvent | undefined {
  if (typeof s.id !== "string") return undefined;
  const topupId = typeof s.client_reference_id === "string" ? s.client_reference_id : undefined;
  const paid = eventType === "checkout.session.async_payment_succeeded" || (eventType === "checkout.session.completed" && s.payment_status === "paid");
  if (paid) {
    if (typeof s.amount_total !== "number" || typeof s.currency !== "string") return undefined;
    const pi = s.payment_intent;
    const paymentRef = typeof pi === "string" ? pi : isObject(pi) && typeof pi.id === "string" ? pi.id : undefined;
    return { kind: "paid", eventId, eventType, providerRef: s.id, topupId, amount: s.amount_total, currency: s.currency, paymentRef };
  }
  if (eventType === "checkout.session.async_payment_failed") return { kind: "failed", eventId, eventType, providerRef: s.id, topupId, reason: "the payment failed" };
  if (eventType === "checkout.session.expired") return { kind: "failed", eventId, eventType, providerRef: s.id, topupId, reason: "the payment page expired unpaid" };
  return { kind: "other", eventId, eventType };
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}
