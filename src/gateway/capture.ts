// The charge of a live call whose image is in hand, and what its outcome means for the
// answer. The charge itself (priced by the output's pixels, asked again through a store
// outage up to the request's deadline) is billing's: src/billing/call-money.ts and
// src/billing/capture-retry.ts. The rule here is that an error is never answered for a
// call that may have been charged (docs/RELIABILITY.md "Money windows"):
// - charged: delivered, with what was charged, the balance after it and the allowance
//   the charge reported;
// - refused by the ledger (the hold had already been released or is gone) or failed
//   with an error that is not an outage (the capture did not run): 503, nothing was
//   charged, and the call's hold is given back with the rest of what it took;
// - unknown at the deadline: the work is done and may be charged, so it is delivered
//   with the price the reconciler will capture (the balance after it is unknown, so
//   that header is left out), and the hold goes to the reconciler.
import type { CaptureCall, Charge } from "../billing/call-money.ts";
import type { CaptureOutcome } from "../billing/capture-retry.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { H } from "../http/headers.ts";
import { STORE_RETRY_AFTER_S } from "../http/store-unavailable.ts";
import type { SpendAllowance } from "../billing/spend-allowance.ts";
import type { MoneyPort } from "./ports.ts";

/** A charge that stands, or may: what the answer and the request-log row say about it. */
export interface Charged {
  ok: true;
  chargedKrw: number;
  /** X-PD-Charged-KRW, and X-PD-Balance-KRW when the balance after it is known. */
  headers: Record<string, string>;
  /** What the key may still spend after it (X-RateLimit-* without another read). */
  allowance?: SpendAllowance;
  /** The request-log row was written by the charge's own statement. */
  logged: boolean;
}

export async function chargeCall(
  money: MoneyPort,
  call: CaptureCall,
  o: {
    log: (e: Record<string, unknown>) => void;
    /** Writes the call's row as it then is: run again once the reconciler has captured (the row written now may be lost too). */
    writeRowAgain: () => Promise<void>;
  },
): Promise<Charged | Failure> {
  return chargeAnswer(await money.capture(call), call.requestId, money, o);
}

/** What each capture outcome means for the answer. */
function chargeAnswer(
  outcome: CaptureOutcome<Charge>,
  requestId: string,
  money: Pick<MoneyPort, "reconcile">,
  o: { log: (e: Record<string, unknown>) => void; writeRowAgain: () => Promise<void> },
): Charged | Failure {
  switch (outcome.kind) {
    case "charged": {
      const c = outcome.charge;
      return {
        ok: true,
        chargedKrw: c.chargedKrw,
        headers: { [H.chargedKrw]: String(c.chargedKrw), [H.balanceKrw]: String(c.balanceKrw) },
        allowance: c.allowance,
        logged: c.logged,
      };
    }
    case "refused":
      o.log({ level: "error", msg: "capture refused", requestId, code: outcome.refusal.code, err: outcome.refusal.title });
      return fail("service_unavailable", `${outcome.refusal.title ?? "The charge was refused"}; nothing was charged`, STORE_RETRY_AFTER_S);
    case "failed":
      o.log({ level: "error", msg: "capture failed", requestId, err: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) });
      return fail("service_unavailable", "Billing is temporarily unavailable; nothing was charged", STORE_RETRY_AFTER_S);
    case "unknown": {
      const price = outcome.amountKrw;
      o.log({ level: "error", msg: "capture outcome unknown at the deadline; reconciler takes the hold", requestId, amountKrw: price, err: String(outcome.lastError) });
      money.reconcile(requestId, price, o.writeRowAgain);
      return { ok: true, chargedKrw: price, headers: { [H.chargedKrw]: String(price) }, logged: false };
    }
  }
}
