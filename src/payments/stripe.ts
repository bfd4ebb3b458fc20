// Stripe as the payment provider (docs/DECISIONS.md "Payments"), through its REST API
// with the account's secret key: a Checkout Session in KRW per top-up (Stripe's hosted
// page takes the card or the Korean wallet), and refunds of the PaymentIntent it made.
// Whether a payment went through is never read from here: only the signed webhook says
// so (stripe-webhook.ts). KRW is a zero-decimal currency at Stripe: 10000 means ₩10,000.
import { fail, type Failure } from "../http/api-error.ts";
import type { PaymentProvider } from "./provider.ts";

export interface StripeOptions {
  secretKey: string;
  /** https://api.stripe.com, or a local stand-in in tests. */
  apiUrl: string;
  log: (e: Record<string, unknown>) => void;
  /** Per API call; Stripe answers in well under a second. */
  timeoutMs?: number;
}

/** What the console's page and the customer's statement call the purchase. */
const PRODUCT_NAME = "Pixeldrop credit";
const DEFAULT_TIMEOUT_MS = 20_000;

export function createStripeProvider(o: StripeOptions): PaymentProvider {
  const call = stripeCaller(o);
  return {
    name: "stripe",
    takesMoney: true,
    async start({ topupId, amountKrw, returnUrl, cancelUrl }) {
      const r = await call("/v1/checkout/sessions", `topup-${topupId}`, {
        mode: "payment",
        client_reference_id: topupId,
        "metadata[topup_id]": topupId,
        "payment_intent_data[metadata][topup_id]": topupId,
        "line_items[0][quantity]": "1",
        "line_items[0][price_data][currency]": "krw",
        "line_items[0][price_data][unit_amount]": String(amountKrw),
        "line_items[0][price_data][product_data][name]": PRODUCT_NAME,
        success_url: returnUrl,
        cancel_url: cancelUrl,
      });
      if (!r.ok) return r;
      const s = r.body;
      // The session must be the one asked for: its amount and currency are what the webhook is checked against too.
      if (typeof s.id !== "string" || !s.id.startsWith("cs_") || !isWebUrl(s.url) || s.amount_total !== amountKrw || s.currency !== "krw") {
        o.log({ level: "error", msg: "stripe checkout session not as asked", topupId, session: s.id });
        return fail("upstream_error", "The payment provider answered with an unexpected payment");
      }
      return { ok: true, providerRef: s.id, payUrl: s.url as string };
    },
    async refund({ paymentRef, amountKrw, idempotencyKey }) {
      const r = await call("/v1/refunds", idempotencyKey, { payment_intent: paymentRef, amount: String(amountKrw), "metadata[reason]": "refund of unused credit" });
      if (!r.ok) return r;
      const re = r.body;
      if (typeof re.id !== "string" || re.amount !== amountKrw || re.status === "failed" || re.status === "canceled") {
        o.log({ level: "error", msg: "stripe refund not made", paymentRef, refund: re.id, status: re.status });
        return fail("upstream_error", `The payment provider did not pay back ${amountKrw} KRW of ${paymentRef}`);
      }
      return { ok: true, refundRef: re.id };
    },
  };
}

type StripeObject = Record<string, unknown>;

/**
 * POSTs a form to the Stripe API with the secret key and an Idempotency-Key (Stripe
 * answers a repeat with the first result, so a retry after a lost answer opens or pays
 * back nothing twice). A refusal carries Stripe's message for the operator's log.
 */
function stripeCaller(o: StripeOptions) {
  const base = o.apiUrl.replace(/\/+$/, "");
  return async (path: string, idempotencyKey: string, form: Record<string, string>): Promise<{ ok: true; body: StripeObject } | Failure> => {
    let res: Response;
    let body: StripeObject;
    try {
      res = await fetch(`${base}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${o.secretKey}`,
          "content-type": "application/x-www-form-urlencoded",
          "idempotency-key": idempotencyKey,
        },
        body: new URLSearchParams(form).toString(),
        signal: AbortSignal.timeout(o.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
      body = (await res.json()) as StripeObject;
    } catch (err) {
      o.log({ level: "error", msg: "stripe unreachable", path, err: err instanceof Error ? err.message : String(err) });
      return fail("upstream_error", "The payment provider did not answer; try again shortly");
    }
    if (res.ok && body && typeof body === "object") return { ok: true, body };
    const error = (body as { error?: { message?: unknown; code?: unknown; type?: unknown } } | null)?.error;
    const message = typeof error?.message === "string" ? error.message : `HTTP ${res.status}`;
    o.log({ level: "error", msg: "stripe refused", path, status: res.status, code: error?.code, type: error?.type, message });
    // The key was first used with other parameters: for a refund, a share of that payment
    // was already paid back with another amount (refunds.ts), and only the same amount
    // finds that refund again.
    if (error?.type === "idempotency_error") {
      return fail("conflict", "The payment provider already has this request with other parameters: ask again with the same amount as the first time");
    }
    return res.status >= 500 || res.status === 429
      ? fail("upstream_error", "The payment provider did not answer; try again shortly")
      : fail("conflict", `The payment provider refused: ${message}`);
  };
}

function isWebUrl(u: unknown): boolean {
  if (typeof u !== "string") return false;
  try {
    return /^https?:$/.test(new URL(u).protocol);
  } catch {
    return false;
  }
}
