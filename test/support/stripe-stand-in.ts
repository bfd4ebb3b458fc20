// A local stand-in for the parts of Stripe the service uses, written from Stripe's API
// reference and its "Verify webhook signatures" guide, not from our adapter:
// - POST /v1/checkout/sessions and POST /v1/refunds over real HTTP, form-encoded, with
//   the secret key as a Bearer token and Idempotency-Key (a repeat gets the first answer,
//   a repeat with other parameters a 400 `idempotency_error`; keys are forgotten after
//   24 hours, the least Stripe promises);
// - GET /v1/charges, /v1/refunds and /v1/disputes, the list endpoints: newest first,
//   `limit`, `starting_after`, `created[gte|gt|lte|lt]`, and `payment_intent` / `charge`
//   for refunds; answered as a list object with `has_more` (stripe-stand-in-lists.ts);
// - what happens at Stripe without us: the customer paying on the hosted page (a
//   PaymentIntent and its Charge), a refund made in the Dashboard, a refund that later
//   succeeds or fails, a dispute opened and closed: each with the object Stripe's events
//   carry (Charge with amount_refunded and its refunds list, Refund with status and
//   metadata, Dispute with status);
// - webhook deliveries signed as Stripe signs them: Stripe-Signature `t=<unix s>,v1=<hex>`,
//   v1 = HMAC-SHA256 keyed with the endpoint secret over `<t>.<raw body>` (node:crypto
//   here, so the service's own WebCrypto check is not used to sign what it checks).
// KRW is zero-decimal at Stripe: amounts are whole won. Times come from `now` (the
// test's clock), so objects' `created` and the key window follow it.
import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { listAnswer } from "./stripe-stand-in-lists.ts";

export const STAND_IN_SECRET_KEY = "sk_test_standin0123456789";
export const STAND_IN_WEBHOOK_SECRET = "whsec_standin0123456789abcdef";
/** Stripe keeps an idempotency key at least this long. */
const KEY_KEPT_MS = 24 * 3600_000;

export interface Session {
  id: string;
  object: "checkout.session";
  url: string;
  mode: string;
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_intent: string | null;
  payment_status: "unpaid" | "paid";
  status: "open" | "complete" | "expired";
  success_url: string;
  cancel_url: string;
  created: number;
}

export type RefundStatus = "pending" | "requires_action" | "succeeded" | "failed" | "canceled";

export interface Refund {
  id: string;
  object: "refund";
  amount: number;
  currency: string;
  charge: string;
  payment_intent: string;
  status: RefundStatus;
  metadata: Record<string, string>;
  reason: string | null;
  failure_reason?: string;
  created: number;
}

export interface Charge {
  id: string;
  object: "charge";
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  currency: string;
  payment_intent: string;
  paid: boolean;
  status: "succeeded";
  refunded: boolean;
  disputed: boolean;
  metadata: Record<string, string>;
  created: number;
}

export type DisputeStatus = "warning_needs_response" | "warning_under_review" | "warning_closed" | "needs_response" | "under_review" | "won" | "lost";

export interface Dispute {
  id: string;
  object: "dispute";
  amount: number;
  currency: string;
  charge: string;
  payment_intent: string;
  reason: string;
  status: DisputeStatus;
  is_charge_refundable: boolean;
  metadata: Record<string, string>;
  created: number;
}

export interface StandIn {
  url: string;
  sessions: Map<string, Session>;
  charges: Map<string, Charge>;
  refunds: Refund[];
  disputes: Dispute[];
  /** Every API request: method, path, headers we check, form, query. */
  requests: { method: string; path: string; authorization: string | undefined; idempotencyKey: string | undefined; form: Record<string, string>; query: Record<string, string> }[];
  /** Makes the next API answers fail with this status (e.g. 500, or 402 for a refused refund); undefined: normal. */
  failWith: number | undefined;
  /** The status a refund made through the API starts in (default succeeded). */
  refundStatus: RefundStatus;
  /** The next API request is carried out, then its connection is dropped: the answer is lost. */
  loseNextAnswer: boolean;
  /** Answers list endpoints in pages of at most this many (Stripe: `limit`, at most 100). */
  pageSize: number;
  /**
   * Holds every Checkout Session request until `release` (a provider slowed down for as
   * long as the test needs); `waiting` counts the requests held.
   */
  holdCheckouts(): { waiting: () => number; release: () => void };
  /** The customer pays on the hosted page: the session is paid, a PaymentIntent and its Charge made. */
  pay(sessionId: string): Session;
  /** The Charge of a PaymentIntent, as an event carries it: with its refunds as a complete list, unless `withRefunds` is false. */
  charge(paymentIntent: string, withRefunds?: boolean): Charge & { refunds?: unknown };
  /** A refund made in Stripe's Dashboard (no metadata of ours). */
  dashboardRefund(paymentIntent: string, amount: number): Refund;
  /** A refund's later outcome at the bank: succeeded, failed (the money back on the charge) or canceled. */
  settleRefund(refundId: string, status: "succeeded" | "failed" | "canceled"): Refund;
  /** The customer's bank disputes the payment (a chargeback, or an inquiry with a warning_ status). */
  openDispute(paymentIntent: string, amount?: number, status?: DisputeStatus): Dispute;
  closeDispute(disputeId: string, status: "won" | "lost" | "warning_closed"): Dispute;
  /** A Stripe event about an object, as JSON text. */
  event(type: string, object: object, patch?: Record<string, unknown>): { id: string; body: string };
  /** Stripe-Signature for a body at `t` (seconds), with the endpoint secret or another. */
  sign(body: string, t: number, secret?: string): string;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

export async function startStripeStandIn(o: { now?: () => number } = {}): Promise<StandIn> {
  const now = o.now ?? Date.now;
  const seconds = () => Math.floor(now() / 1000);
  const sessions = new Map<string, Session>();
  const charges = new Map<string, Charge>();
  const chargeOfIntent = new Map<string, Charge>();
  const refunds: Refund[] = [];
  const disputes: Dispute[] = [];
  const requests: StandIn["requests"] = [];
  const answered = new Map<string, { status: number; body: unknown; form: string; at: number }>();
  let gate: { promise: Promise<void>; release: () => void; waiting: number } | undefined;
  let base = "";

  const chargeOf = (pi: string): Charge => {
    const c = chargeOfIntent.get(pi);
    if (!c) throw new Error(`no charge for ${pi}`);
    return c;
  };
  /** amount_refunded counts refunds not failed or canceled, as Stripe's Charge does. */
  const recount = (c: Charge) => {
    c.amount_refunded = refunds.filter((r) => r.charge === c.id && r.status !== "failed" && r.status !== "canceled").reduce((n, r) => n + r.amount, 0);
    c.refunded = c.amount_refunded === c.amount;
  };
  const makeRefund = (c: Charge, amount: number, status: RefundStatus, metadata: Record<string, string>, reason: string | null): Refund => {
    const r: Refund = { id: id("re"), object: "refund", amount, currency: c.currency, charge: c.id, payment_intent: c.payment_intent, status, metadata, reason, created: seconds() };
    refunds.push(r);
    recount(c);
    return r;
  };

  const standIn: StandIn = {
    url: "",
    sessions,
    charges,
    refunds,
    disputes,
    requests,
    failWith: undefined,
    refundStatus: "succeeded",
    loseNextAnswer: false,
    pageSize: 100,
    holdCheckouts() {
      let release!: () => void;
      const promise = new Promise<void>((r) => (release = r));
      const g = { promise, release, waiting: 0 };
      gate = g;
      return {
        waiting: () => g.waiting,
        release: () => {
          if (gate === g) gate = undefined;
          g.release();
        },
      };
    },
    pay(sessionId) {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no session ${sessionId}`);
      s.payment_status = "paid";
      s.status = "complete";
      s.payment_intent = id("pi");
      const c: Charge = {
        id: id("ch"),
        object: "charge",
        amount: s.amount_total,
        amount_captured: s.amount_total,
        amount_refunded: 0,
        currency: s.currency,
        payment_intent: s.payment_intent,
        paid: true,
        status: "succeeded",
        refunded: false,
        disputed: false,
        metadata: {},
        created: seconds(),
      };
      charges.set(c.id, c);
      chargeOfIntent.set(c.payment_intent, c);
      return s;
    },
    charge(pi, withRefunds = true) {
      const c = chargeOf(pi);
      if (!withRefunds) return { ...c };
      const data = refunds.filter((r) => r.charge === c.id).reverse();
      return { ...c, refunds: { object: "list", data, has_more: false, total_count: data.length, url: `/v1/charges/${c.id}/refunds` } };
    },
    dashboardRefund(pi, amount) {
      return makeRefund(chargeOf(pi), amount, "succeeded", {}, "requested_by_customer");
    },
    settleRefund(refundId, status) {
      const r = refunds.find((x) => x.id === refundId);
      if (!r) throw new Error(`no refund ${refundId}`);
      r.status = status;
      if (status === "failed") r.failure_reason = "expired_or_canceled_card";
      recount(charges.get(r.charge)!);
      return r;
    },
    openDispute(pi, amount, status = "needs_response") {
      const c = chargeOf(pi);
      c.disputed = true;
      const d: Dispute = {
        id: id("du"),
        object: "dispute",
        amount: amount ?? c.amount,
        currency: c.currency,
        charge: c.id,
        payment_intent: pi,
        reason: "fraudulent",
        status,
        is_charge_refundable: false,
        metadata: {},
        created: seconds(),
      };
      disputes.push(d);
      return d;
    },
    closeDispute(disputeId, status) {
      const d = disputes.find((x) => x.id === disputeId);
      if (!d) throw new Error(`no dispute ${disputeId}`);
      d.status = status;
      return d;
    },
    event(type, object, patch = {}) {
      const eventId = id("evt");
      const body = JSON.stringify({
        id: eventId,
        object: "event",
        api_version: "2025-05-28.basil",
        created: seconds(),
        livemode: false,
        pending_webhooks: 1,
        type,
        data: { object: { ...object, ...patch } },
      });
      return { id: eventId, body };
    },
    sign(body, t, secret = STAND_IN_WEBHOOK_SECRET) {
      const v1 = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest("hex");
      return `t=${t},v1=${v1}`;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
    const authorization = req.headers.authorization;
    const idempotencyKey = req.headers["idempotency-key"] as string | undefined;
    const url = new URL(req.url ?? "/", "http://stand-in");
    const path = url.pathname;
    const method = req.method ?? "GET";
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method, path, authorization, idempotencyKey, form, query });
    const lose = standIn.loseNextAnswer;
    standIn.loseNextAnswer = false;
    const send = (status: number, body: unknown) => {
      if (lose) {
        res.socket?.destroy();
        return;
      }
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, code: string, message: string) => send(status, { error: { type: "invalid_request_error", code, message } });
    if (authorization !== `Bearer ${STAND_IN_SECRET_KEY}`) return error(401, "api_key_invalid", "Invalid API Key provided");
    if (standIn.failWith !== undefined) return error(standIn.failWith, "stand_in_failure", "The stand-in was told to fail");

    if (method === "GET") {
      const pageOf = <T extends { id: string; created: number }>(all: T[], filter: (x: T) => boolean = () => true) =>
        listAnswer(all.filter(filter), query, path, standIn.pageSize);
      let answer: { status: number; body: unknown } | undefined;
      if (path === "/v1/charges") answer = pageOf([...charges.values()], (c) => !query.payment_intent || c.payment_intent === query.payment_intent);
      if (path === "/v1/refunds") {
        answer = pageOf(refunds, (r) => (!query.payment_intent || r.payment_intent === query.payment_intent) && (!query.charge || r.charge === query.charge));
      }
      if (path === "/v1/disputes") answer = pageOf(disputes, (d) => (!query.payment_intent || d.payment_intent === query.payment_intent) && (!query.charge || d.charge === query.charge));
      if (answer) return send(answer.status, answer.body);
      return error(404, "resource_missing", `Unrecognized request URL (${method}: ${path})`);
    }

    const key = idempotencyKey ? `${path} ${idempotencyKey}` : undefined;
    const first = key ? answered.get(key) : undefined;
    const again = first && now() - first.at < KEY_KEPT_MS ? first : undefined;
    const asked = JSON.stringify(form);
    if (again && again.form !== asked) {
      // Stripe's documented rule: a key is bound to the parameters of its first request.
      return send(400, { error: { type: "idempotency_error", message: `Idempotency key ${idempotencyKey} was first used with other parameters` } });
    }
    if (again) return send(again.status, again.body);
    const remember = (status: number, body: unknown) => {
      // The first answer as it was then: the object may change later (a refund that fails).
      if (key) answered.set(key, { status, body: JSON.parse(JSON.stringify(body)) as unknown, form: asked, at: now() });
      send(status, body);
    };

    if (method === "POST" && path === "/v1/checkout/sessions") {
      const amount = Number(form["line_items[0][price_data][unit_amount]"]);
      const quantity = Number(form["line_items[0][quantity]"] ?? "1");
      if (form.mode !== "payment" || !Number.isInteger(amount) || amount < 100 || !form.success_url || !form.cancel_url) {
        return error(400, "parameter_invalid", "mode, a whole unit_amount of at least 100 KRW, success_url and cancel_url are required");
      }
      const held = gate;
      if (held) {
        held.waiting++;
        await held.promise;
      }
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(form)) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1]!] = v;
      }
      const sid = id("cs_test");
      const s: Session = {
        id: sid,
        object: "checkout.session",
        url: `${base}/c/pay/${sid}`,
        mode: "payment",
        amount_total: amount * quantity,
        currency: form["line_items[0][price_data][currency]"] ?? "",
        client_reference_id: form.client_reference_id ?? null,
        metadata,
        payment_intent: null,
        payment_status: "unpaid",
        status: "open",
        success_url: form.success_url,
        cancel_url: form.cancel_url,
        created: seconds(),
      };
      sessions.set(sid, s);
      return remember(200, s);
    }
    if (method === "POST" && path === "/v1/refunds") {
      const pi = form.payment_intent ?? "";
      const c = chargeOfIntent.get(pi);
      if (!c) return error(400, "resource_missing", `No such payment_intent: '${pi}'`);
      const amount = form.amount === undefined ? c.amount - c.amount_refunded : Number(form.amount);
      if (!Number.isInteger(amount) || amount <= 0) return error(400, "parameter_invalid_integer", "Invalid amount");
      if (disputes.some((d) => d.charge === c.id && !["won", "lost", "warning_closed"].includes(d.status))) {
        return error(400, "charge_disputed", `Charge ${c.id} has been charged back; refund the dispute instead`);
      }
      if (c.amount_refunded >= c.amount) return error(400, "charge_already_refunded", "Charge has already been refunded.");
      if (amount > c.amount - c.amount_refunded) return error(400, "amount_too_large", `Refund amount (₩${amount}) is greater than unrefunded amount on charge (₩${c.amount - c.amount_refunded})`);
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(form)) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1]!] = v;
      }
      return remember(200, makeRefund(c, amount, standIn.refundStatus, metadata, null));
    }
    error(404, "resource_missing", `Unrecognized request URL (${method}: ${path})`);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standIn.url = base;
  return standIn;
}
