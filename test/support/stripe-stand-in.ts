// A local stand-in for the parts of Stripe the service uses, written from Stripe's API
// reference and its "Verify webhook signatures" guide, not from our adapter:
// - POST /v1/checkout/sessions and POST /v1/refunds over real HTTP, form-encoded, with
//   the secret key as a Bearer token and Idempotency-Key (a repeat gets the first answer,
//   a repeat with other parameters a 400 `idempotency_error`);
// - the customer paying on the hosted page (pay), which makes the events Stripe sends;
// - webhook deliveries signed as Stripe signs them: Stripe-Signature `t=<unix s>,v1=<hex>`,
//   v1 = HMAC-SHA256 keyed with the endpoint secret over `<t>.<raw body>` (node:crypto
//   here, so the service's own WebCrypto check is not used to sign what it checks).
// KRW is zero-decimal at Stripe: amounts are whole won.
import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const STAND_IN_SECRET_KEY = "sk_test_standin0123456789";
export const STAND_IN_WEBHOOK_SECRET = "whsec_standin0123456789abcdef";

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
}

export interface Refund {
  id: string;
  object: "refund";
  amount: number;
  payment_intent: string;
  status: "succeeded";
}

export interface StandIn {
  url: string;
  sessions: Map<string, Session>;
  refunds: Refund[];
  /** Every API request: path, headers we check, form. */
  requests: { path: string; authorization: string | undefined; idempotencyKey: string | undefined; form: Record<string, string> }[];
  /** Makes the next API answers fail with this status (e.g. 500, or 402 for a refused refund); undefined: normal. */
  failWith: number | undefined;
  /** The customer pays on the hosted page: the session is paid and a PaymentIntent made. */
  pay(sessionId: string): Session;
  /** A Stripe event about a session (checkout.session.completed etc.), as JSON text. */
  event(type: string, session: Session, patch?: Partial<Session>): { id: string; body: string };
  /** Stripe-Signature for a body at `t` (seconds), with the endpoint secret or another. */
  sign(body: string, t: number, secret?: string): string;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

export async function startStripeStandIn(): Promise<StandIn> {
  const sessions = new Map<string, Session>();
  const refunds: Refund[] = [];
  const requests: StandIn["requests"] = [];
  const answered = new Map<string, { status: number; body: unknown; form: string }>();
  const paidBy = new Map<string, number>(); // payment_intent → amount paid
  let base = "";

  const standIn: StandIn = {
    url: "",
    sessions,
    refunds,
    requests,
    failWith: undefined,
    pay(sessionId) {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no session ${sessionId}`);
      s.payment_status = "paid";
      s.status = "complete";
      s.payment_intent = id("pi");
      paidBy.set(s.payment_intent, s.amount_total);
      return s;
    },
    event(type, session, patch = {}) {
      const eventId = id("evt");
      const body = JSON.stringify({
        id: eventId,
        object: "event",
        api_version: "2025-05-28.basil",
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        pending_webhooks: 1,
        type,
        data: { object: { ...session, ...patch } },
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
    const path = req.url ?? "";
    requests.push({ path, authorization, idempotencyKey, form });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, code: string, message: string) => send(status, { error: { type: "invalid_request_error", code, message } });
    if (authorization !== `Bearer ${STAND_IN_SECRET_KEY}`) return error(401, "api_key_invalid", "Invalid API Key provided");
    if (standIn.failWith !== undefined) return error(standIn.failWith, "stand_in_failure", "The stand-in was told to fail");
    const key = idempotencyKey ? `${path} ${idempotencyKey}` : undefined;
    const again = key ? answered.get(key) : undefined;
    const asked = JSON.stringify(form);
    if (again && again.form !== asked) {
      // Stripe's documented rule: a key is bound to the parameters of its first request.
      return send(400, { error: { type: "idempotency_error", message: `Idempotency key ${idempotencyKey} was first used with other parameters` } });
    }
    if (again) return send(again.status, again.body);
    const remember = (status: number, body: unknown) => {
      if (key) answered.set(key, { status, body, form: asked });
      send(status, body);
    };

    if (req.method === "POST" && path === "/v1/checkout/sessions") {
      const amount = Number(form["line_items[0][price_data][unit_amount]"]);
      const quantity = Number(form["line_items[0][quantity]"] ?? "1");
      if (form.mode !== "payment" || !Number.isInteger(amount) || amount < 100 || !form.success_url || !form.cancel_url) {
        return error(400, "parameter_invalid", "mode, a whole unit_amount of at least 100 KRW, success_url and cancel_url are required");
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
      };
      sessions.set(sid, s);
      return remember(200, s);
    }
    if (req.method === "POST" && path === "/v1/refunds") {
      const pi = form.payment_intent ?? "";
      const paid = paidBy.get(pi);
      if (paid === undefined) return error(400, "resource_missing", `No such payment_intent: '${pi}'`);
      const already = refunds.filter((r) => r.payment_intent === pi).reduce((n, r) => n + r.amount, 0);
      const amount = form.amount === undefined ? paid - already : Number(form.amount);
      if (!Number.isInteger(amount) || amount <= 0) return error(400, "parameter_invalid_integer", "Invalid amount");
      if (already >= paid) return error(400, "charge_already_refunded", "Charge has already been refunded.");
      if (amount > paid - already) return error(400, "amount_too_large", `Refund amount (₩${amount}) is greater than unrefunded amount on charge (₩${paid - already})`);
      const r: Refund = { id: id("re"), object: "refund", amount, payment_intent: pi, status: "succeeded" };
      refunds.push(r);
      return remember(200, r);
    }
    error(404, "resource_missing", `Unrecognized request URL (${req.method}: ${path})`);
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
