// The sandbox: approves every payment it opened, takes no money, and is answered in the
// console itself (no provider page, no webhook). For trying the console outside
// production only (config.ts refuses it under NODE_ENV=production). What it credits is
// credit, never money: takesMoney is false, so a refund pays none of it back.
import { randomBase62 } from "../db/index.ts";
import { fail } from "../http/api-error.ts";
import type { PaymentEvent, PaymentProvider } from "./provider.ts";

export interface SandboxProvider extends PaymentProvider {
  readonly name: "sandbox";
  /** The customer's "Pay" in the console: the event a real provider's webhook would bring. */
  approve(p: { providerRef: string; amountKrw: number }): PaymentEvent;
}

export function createSandboxProvider(opts: { decline?: (amountKrw: number) => boolean } = {}): SandboxProvider {
  return {
    name: "sandbox",
    takesMoney: false,
    async start({ returnUrl }) {
      // The customer "pays" on the top-up's own console page.
      return { ok: true, providerRef: `sbx_${randomBase62(20)}`, payUrl: returnUrl };
    },
    async refund() {
      return { ...fail("conflict", "The sandbox took no money"), refused: true };
    },
    approve({ providerRef, amountKrw }) {
      // One event per payment: approving twice is the same event, acted on once.
      const eventId = `sbx_evt_${providerRef}`;
      if (opts.decline?.(amountKrw)) return { kind: "failed", eventId, eventType: "sandbox.declined", providerRef, reason: "declined by the sandbox" };
      return { kind: "paid", eventId, eventType: "sandbox.paid", providerRef, amount: amountKrw, currency: "krw" };
    },
  };
}

export function isSandbox(p: PaymentProvider | undefined): p is SandboxProvider {
  return p?.name === "sandbox";
}
