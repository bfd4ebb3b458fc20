// The service with Stripe as its payment provider, against the local stand-in
// (stripe-stand-in.ts), on the test's clock, with NODE_ENV unset (production): how the
// payment tests top up through the console and deliver Stripe's signed webhooks.
import assert from "node:assert/strict";
import { STRIPE_WEBHOOK_PATH } from "../../src/payments/index.ts";
import type { Client } from "../console/client.ts";
import { makeHarness, type Harness } from "./harness.ts";
import { STAND_IN_SECRET_KEY, STAND_IN_WEBHOOK_SECRET, startStripeStandIn, type Session, type StandIn } from "./stripe-stand-in.ts";

export const PUBLIC_URL = "https://console.example";

export interface StripeService {
  h: Harness;
  stripe: StandIn;
  /** A delivery as Stripe makes it: the raw body and its Stripe-Signature (none when undefined). */
  deliver(body: string, signature: string | undefined): Promise<Response>;
  /** Its status and the outcome the service answered. */
  delivered(body: string, signature: string | undefined): Promise<{ status: number; outcome?: string }>;
  /** The same, signed now as Stripe signs. */
  send(body: string): Promise<{ status: number; outcome?: string }>;
  /** The customer chooses an amount in the console: the top-up's page and its Stripe session. */
  startTopup(client: Client, amountKrw: number): Promise<{ topupId: string; session: Session; page: string }>;
  /** A top-up paid on Stripe's page and credited by its webhook: its PaymentIntent. */
  paidTopup(client: Client, amountKrw: number): Promise<{ topupId: string; paymentIntent: string }>;
  balance(orgId: string): Promise<number>;
  close(): Promise<void>;
}

export async function startStripeService(o: { now: () => number; logLines?: string[] }): Promise<StripeService> {
  const stripe = await startStripeStandIn({ now: o.now });
  const h = await makeHarness({
    now: o.now,
    logLines: o.logLines,
    env: {
      TRUST_PROXY: "true",
      PUBLIC_URL,
      PAYMENT_PROVIDER: "stripe",
      STRIPE_SECRET_KEY: STAND_IN_SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: STAND_IN_WEBHOOK_SECRET,
      STRIPE_API_URL: stripe.url,
    },
  }).catch(async (err: unknown) => {
    await stripe.close();
    throw err;
  });
  const nowS = () => Math.floor(o.now() / 1000);

  const deliver: StripeService["deliver"] = (body, signature) => {
    const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)" };
    if (signature !== undefined) headers["stripe-signature"] = signature;
    return Promise.resolve(h.app.request(STRIPE_WEBHOOK_PATH, { method: "POST", headers, body }));
  };
  const delivered: StripeService["delivered"] = async (body, signature) => {
    const res = await deliver(body, signature);
    const json = (await res.json()) as { outcome?: string };
    return { status: res.status, outcome: json.outcome };
  };
  const send: StripeService["send"] = (body) => delivered(body, stripe.sign(body, nowS()));
  const startTopup: StripeService["startTopup"] = async (client, amountKrw) => {
    await client.get("/console/credit");
    const started = await client.post("/console/credit/top-ups", { amountKrw: String(amountKrw) });
    assert.equal(started.status, 303, started.html);
    const topupId = /\/console\/credit\/top-ups\/(top_\w+)$/.exec(started.location ?? "")?.[1];
    assert.ok(topupId, `redirected to the top-up's page: ${started.location}`);
    const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === topupId);
    assert.ok(session, "a Checkout Session for the top-up");
    const page = await client.get(started.location!);
    return { topupId, session, page: page.html };
  };
  return {
    h,
    stripe,
    deliver,
    delivered,
    send,
    startTopup,
    async paidTopup(client, amountKrw) {
      const { topupId, session } = await startTopup(client, amountKrw);
      const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
      assert.equal((await send(ev.body)).outcome, "credited");
      return { topupId, paymentIntent: stripe.sessions.get(session.id)!.payment_intent! };
    },
    balance: async (orgId) => (await h.services.billing.balances(orgId))!.balanceKrw,
    async close() {
      await h.close();
      await stripe.close();
    },
  };
}
