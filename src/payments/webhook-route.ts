// POST /webhooks/stripe: where Stripe tells us a payment went through. Anyone can reach
// it, so the body is bounded before it is read whole (413), the signature and its age are
// checked before the body is believed (400), and only then is the event settled, once
// (topups.ts). An event already acted on, or one for no top-up of ours, is answered 200
// so Stripe stops resending it; a store fault is answered 5xx so Stripe resends it.
import type { Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { fail } from "../http/api-error.ts";
import { failureResponse } from "../http/error-response.ts";
import { readBodyCapped } from "../http/read-body.ts";
import { STRIPE_WEBHOOK_MAX_BYTES, verifyStripeWebhook } from "./stripe-webhook.ts";
import type { Topups } from "./topups.ts";

export const STRIPE_WEBHOOK_PATH = "/webhooks/stripe";

export interface WebhookDeps {
  topups: Pick<Topups, "settle">;
  /** The endpoint's signing secret (STRIPE_WEBHOOK_SECRET). */
  secret: string;
  now: () => number;
  log: (e: Record<string, unknown>) => void;
}

export function registerStripeWebhook(app: Hono<AppEnv>, d: WebhookDeps): void {
  app.post(STRIPE_WEBHOOK_PATH, async (c) => {
    const requestId = c.get("requestId");
    const body = await readBodyCapped(c.req.raw, STRIPE_WEBHOOK_MAX_BYTES);
    if (!body.ok) {
      const f = body.code === "file_too_large" ? fail("file_too_large", `A webhook body is at most ${STRIPE_WEBHOOK_MAX_BYTES} bytes`) : body;
      return failureResponse(requestId, f);
    }
    const verified = await verifyStripeWebhook(body.bytes, c.req.header("stripe-signature") ?? null, d.secret, d.now());
    if (!verified.ok) {
      d.log({ level: "warn", msg: "stripe webhook refused", requestId, reason: verified.reason });
      return failureResponse(requestId, fail("invalid_parameter", `Webhook refused: ${verified.reason}`));
    }
    const r = await d.topups.settle("stripe", verified.event);
    return c.json({ received: true, outcome: r.outcome });
  });
}
