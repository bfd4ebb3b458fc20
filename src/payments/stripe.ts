// Stripe as the payment provider (docs/DECISIONS.md "Payments"), through its REST API
// with the account's secret key: a Checkout Session in KRW per top-up (Stripe's hosted
// page takes the card or the Korean wallet), refunds of the PaymentIntent it made, and
// the list endpoints the reconciliation and a refund asked again read. Whether a payment
// went through is never read from here: only the signed webhook says so
// (stripe-webhook.ts). KRW is a zero-decimal currency at Stripe: 10000 means ₩10,000.
import { fail, type Failure } from "../http/api-error.ts";
import type { PaymentProvider, ProviderRefund, RefundRefusal } from "./provider.ts";
import { isObject, stripeCharge, stripeDispute, stripeRefund } from "./stripe-objects.ts";

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
/** Stripe's largest page. */
const PAGE = 100;
/** Pages read of one list at most (5,000 objects): a range holding more is refused, to be asked in parts. */
export const STRIPE_LIST_MAX_PAGES = 50;
/** How long reading one list may take in all: the operator waits on the answer. */
const LIST_DEADLINE_MS = 90_000;

export function createStripeProvider(o: StripeOptions): PaymentProvider {
  const { call, get } = stripeApi(o);
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
      if (!r.ok) return fail(r.code, r.title);
      const s = r.body;
      // The session must be the one asked for: its amount and currency are what the webhook is checked against too.
      if (typeof s.id !== "string" || !s.id.startsWith("cs_") || !isWebUrl(s.url) || s.amount_total !== amountKrw || s.currency !== "krw") {
        o.log({ level: "error", msg: "stripe checkout session not as asked", topupId, session: s.id });
        return fail("upstream_error", "The payment provider answered with an unexpected payment");
      }
      return { ok: true, providerRef: s.id, payUrl: s.url as string };
    },
    async refund({ paymentRef, amountKrw, refundId, idempotencyKey }) {
      const r = await call("/v1/refunds", idempotencyKey, {
        payment_intent: paymentRef,
        amount: String(amountKrw),
        "metadata[refund_id]": refundId,
        "metadata[reason]": "refund of unused credit",
      });
      if (!r.ok) return refusal(r);
      const re = stripeRefund(r.body);
      if (!re || re.amount !== amountKrw || re.paymentRef !== paymentRef) {
        // Stripe answered 200 with something else: whether money moved is unknown, so the refund stays in flight.
        o.log({ level: "error", msg: "stripe refund answer not as asked", paymentRef, refundId, refund: r.body.id, status: r.body.status });
        return { ...fail("upstream_error", `The payment provider answered the refund of ${amountKrw} KRW of ${paymentRef} with something else`), refused: false };
      }
      return { ok: true, refund: re };
    },
    async refundsOf({ paymentRef, chargeRef }) {
      const query: Record<string, string> = paymentRef ? { payment_intent: paymentRef } : { charge: chargeRef ?? "" };
      const r = await list("/v1/refunds", query, stripeRefund);
      return r.ok ? { ok: true, refunds: r.items } : r;
    },
    async records(fromMs, toMs) {
      // Stripe's created filter is in whole seconds: [ceil(from), ceil(to)) holds every object created in [from, to).
      const created = { "created[gte]": String(Math.ceil(fromMs / 1000)), "created[lt]": String(Math.ceil(toMs / 1000)) };
      const [payments, refunds, disputes] = await Promise.all([
        list("/v1/charges", created, stripeCharge),
        list("/v1/refunds", created, stripeRefund),
        list("/v1/disputes", created, stripeDispute),
      ]);
      if (!payments.ok) return payments;
      if (!refunds.ok) return refunds;
      if (!disputes.ok) return disputes;
      return { ok: true, payments: payments.items, refunds: refunds.items, disputes: disputes.items };
    },
  };

  /**
   * Every object of a list endpoint, page by page (Stripe's cursor pagination: `limit`,
   * `starting_after` the last ID of the page, until `has_more` is false). An object that
   * is not as documented fails the whole read: a reconciliation must not skip money.
   */
  async function list<T>(path: string, query: Record<string, string>, read: (o: unknown) => T | undefined): Promise<{ ok: true; items: T[] } | Failure> {
    const items: T[] = [];
    let after: string | undefined;
    const started = Date.now();
    for (let page = 0; page < STRIPE_LIST_MAX_PAGES; page++) {
      if (Date.now() - started > LIST_DEADLINE_MS) {
        o.log({ level: "error", msg: "stripe list too slow", path, pages: page, items: items.length });
        return fail("upstream_error", `The payment provider took more than ${LIST_DEADLINE_MS / 1000} s to list ${path}: ask for a shorter range`);
      }
      const r = await get(path, { ...query, limit: String(PAGE), ...(after ? { starting_after: after } : {}) });
      // A read refused (a restricted key without read access, say) is the provider failing us, whatever its status.
      if (!r.ok) return fail("upstream_error", r.title);
      const data = r.body.data;
      if (r.body.object !== "list" || !Array.isArray(data) || typeof r.body.has_more !== "boolean") return unexpected(path);
      for (const raw of data) {
        const item = read(raw);
        if (item === undefined) return unexpected(path);
        items.push(item);
      }
      const last = data.at(-1);
      if (!r.body.has_more) {
        if (page > 0) o.log({ level: "info", msg: "stripe list read", path, pages: page + 1, items: items.length, ms: Date.now() - started });
        return { ok: true, items };
      }
      if (!isObject(last) || typeof last.id !== "string") return unexpected(path);
      after = last.id;
    }
    return fail("invalid_parameter", `The payment provider holds more than ${STRIPE_LIST_MAX_PAGES * PAGE} objects of ${path} in this range: ask for a shorter one`);
  }

  function unexpected(path: string): Failure {
    o.log({ level: "error", msg: "stripe list not as documented", path });
    return fail("upstream_error", `The payment provider answered ${path} with something other than its documented list`);
  }
}

/** Whether Stripe said it made no refund (a 4xx it answered) or the outcome is unknown (no answer, a 5xx, 429, a key bound to other parameters). */
function refusal(f: Failure & { status?: number; stripeType?: string }): RefundRefusal {
  const refused = f.status !== undefined && f.status >= 400 && f.status < 500 && f.status !== 429 && f.stripeType !== "idempotency_error";
  return { ...fail(f.code, f.title, f.retryAfter), refused };
}

type StripeObject = Record<string, unknown>;

/**
 * The Stripe API with the secret key: `call` POSTs a form with an Idempotency-Key (Stripe
 * answers a repeat with the first result, so a retry after a lost answer opens or pays
 * back nothing twice), `get` reads. A refusal carries Stripe's message for the
 * operator's log, and the HTTP status and Stripe's error type for refunds.ts.
 */
type StripeAnswer = { ok: true; body: StripeObject } | (Failure & { status?: number; stripeType?: string });

function stripeApi(o: StripeOptions) {
  const base = o.apiUrl.replace(/\/+$/, "");
  async function send(method: "GET" | "POST", path: string, init: { idempotencyKey?: string; form?: Record<string, string>; query?: Record<string, string> }): Promise<StripeAnswer> {
    let res: Response;
    let body: StripeObject;
    const headers: Record<string, string> = { authorization: `Bearer ${o.secretKey}` };
    if (init.form) headers["content-type"] = "application/x-www-form-urlencoded";
    if (init.idempotencyKey) headers["idempotency-key"] = init.idempotencyKey;
    const url = `${base}${path}${init.query ? `?${new URLSearchParams(init.query).toString()}` : ""}`;
    try {
      res = await fetch(url, {
        method,
        headers,
        ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
        signal: AbortSignal.timeout(o.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
      body = (await res.json()) as StripeObject;
    } catch (err) {
      o.log({ level: "error", msg: "stripe unreachable", path, err: err instanceof Error ? err.message : String(err) });
      return fail("upstream_error", "The payment provider did not answer; try again shortly");
    }
    if (res.ok && isObject(body)) return { ok: true, body };
    const error = (body as { error?: { message?: unknown; code?: unknown; type?: unknown } } | null)?.error;
    const message = typeof error?.message === "string" ? error.message : `HTTP ${res.status}`;
    const stripeType = typeof error?.type === "string" ? error.type : undefined;
    o.log({ level: "error", msg: "stripe refused", path, status: res.status, code: error?.code, type: stripeType, message });
    // The key was first used with other parameters: the first request stands, whatever it did.
    if (stripeType === "idempotency_error") {
      return { ...fail("conflict", "The payment provider already has this request with other parameters"), status: res.status, stripeType };
    }
    const f = res.status >= 500 || res.status === 429 ? fail("upstream_error", "The payment provider did not answer; try again shortly") : fail("conflict", `The payment provider refused: ${message}`);
    return { ...f, status: res.status, ...(stripeType ? { stripeType } : {}) };
  }
  return {
    call: (path: string, idempotencyKey: string, form: Record<string, string>) => send("POST", path, { idempotencyKey, form }),
    get: (path: string, query: Record<string, string>) => send("GET", path, { query }),
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
