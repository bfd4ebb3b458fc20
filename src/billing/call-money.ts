// The money of one paid call, in one place: the hold reserved for the requested size
// before the product runs, the charge by the output's pixels after it (asked again
// through a store outage, capture-retry.ts), the hold given back on any other end, the
// spending allowance X-RateLimit-* reports, and the handover to the reconciler of a
// charge whose outcome stayed unknown and of the hold of a reserve whose outcome is
// unknown (given back, abandon.ts). It also keeps the remembered spending counters
// (recent-spend.ts) in step with the money it moves, and sends the low-balance e-mail
// a charge calls for. Built once per process by src/wiring/app.ts around the ledger;
// the gateway sees it as its MoneyPort (src/gateway/ports.ts).
import type { Db } from "../db/index.ts";
import type { Failure } from "../http/api-error.ts";
import { isStoreUnavailable } from "../http/store-unavailable.ts";
import type { Size } from "../contract/tiers.ts";
import type { Mailer } from "../mail/index.ts";
import { captureUntilKnown, type CaptureOutcome } from "./capture-retry.ts";
import type { Billing } from "./ledger.ts";
import { notifyLowBalance } from "./low-balance.ts";
import type { Reconciler } from "./reconciler.ts";
import { priceForPixels, reserveAmountForSize } from "./prices.ts";
import { createRecentSpend } from "./recent-spend.ts";
import type { RequestLogRow } from "./request-log.ts";
import { readSpendAllowance, spendAllowanceOf, type SpendAllowance, type SpendLimits } from "./spend-allowance.ts";

/** What the money of a call needs to know about the key that pays. */
export interface PayingKey {
  orgId: string;
  appId: string;
  /** As the key's lookup read them: the allowance needs only the counters. */
  spendLimits: SpendLimits;
  /** A low-balance e-mail is asked for and not yet sent: a charge checks the balance against it. */
  lowBalanceWatched: boolean;
}

/** A charge that stands, with what it reports. */
export interface Charge {
  chargedKrw: number;
  balanceKrw: number;
  /** What the key may still spend right after this charge (X-RateLimit-*). */
  allowance: SpendAllowance;
  /** The call's request-log row was written by the charge's own statement. */
  logged: boolean;
}

export interface CaptureCall {
  requestId: string;
  key: PayingKey;
  /** The size the call was reserved for: the charge is never more than that hold. */
  size: Size | undefined;
  /** The output's width × height: what the charge is priced by. */
  pixels: number;
  /** Asked again through a store outage until then (the request's deadline). */
  deadlineAt: number;
  /** The call's request-log row as the success it is about to be: written with the charge. */
  logRow?: RequestLogRow;
}

export interface CallMoney {
  /** Holds the most a call of `size` can cost; no credit or a spending limit is a refusal value. */
  reserve(call: { requestId: string; orgId: string; appId: string; size: Size | undefined }): Promise<{ ok: true } | Failure>;
  /** Charges the held call by its output's pixels; what happened, including "unknown" at the deadline. */
  capture(call: CaptureCall): Promise<CaptureOutcome<Charge>>;
  /** Gives an uncharged hold back (a call that ended any other way). */
  release(requestId: string): Promise<void>;
  /** The tightest spending limit left for a live key (X-RateLimit-*). */
  allowance(key: Pick<PayingKey, "orgId" | "appId" | "spendLimits">): Promise<SpendAllowance>;
  balances(orgId: string): Promise<{ balanceKrw: number; availableKrw: number }>;
  /**
   * Hands a hold whose charge may or may not stand to the reconciler, which captures
   * `amountKrw` once the store is back and then runs `afterCapture` (the call's row).
   */
  reconcile(requestId: string, amountKrw: number, afterCapture?: () => Promise<void>): void;
}

export interface CallMoneyDeps {
  billing: Pick<Billing, "reserve" | "abandon" | "capture" | "release" | "balances">;
  /** For the spending counters' read and the low-balance claim. */
  db: Db;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  mailer: Mailer;
  publicUrl?: string;
  reconciler: Pick<Reconciler, "add" | "giveBack">;
  log: (e: Record<string, unknown>) => void;
}

export function createCallMoney(d: CallMoneyDeps): CallMoney {
  // X-RateLimit-* on a live key's uncharged answers, without a read per refusal. Money
  // moved here is forgotten, or counted, as it moves (recent-spend.ts).
  const recent = createRecentSpend();

  /** One try of the charge; a store outage throws (captureUntilKnown asks again). */
  async function chargeOnce(c: CaptureCall, amountKrw: number): Promise<({ ok: true } & Charge) | Failure> {
    let r: Awaited<ReturnType<Billing["capture"]>>;
    try {
      r = await d.billing.capture(c.requestId, amountKrw, c.logRow);
    } finally {
      recent.forgetOrg(c.key.orgId);
    }
    if (!r.ok) return r;
    recent.remember(c.key.orgId, c.key.appId, r.spendAfter, r.spendAfter.at, recent.reading());
    if (c.key.lowBalanceWatched) {
      // The low-balance e-mail never fails or repeats the paid call it follows.
      await notifyLowBalance({ db: d.db, mailer: d.mailer, publicUrl: d.publicUrl, log: d.log }, c.requestId).catch((err: unknown) =>
        d.log({ level: "warn", msg: "low-balance check failed", requestId: c.requestId, err: err instanceof Error ? err.message : String(err) }),
      );
    }
    return {
      ok: true,
      chargedKrw: r.chargedKrw,
      balanceKrw: r.balanceKrw,
      allowance: spendAllowanceOf(r.spendAfter, c.key.spendLimits, r.spendAfter.at),
      logged: r.logged,
    };
  }

  return {
    async reserve({ requestId, orgId, appId, size }) {
      const amountKrw = reserveAmountForSize(size);
      const reservedAt = d.now();
      recent.reserving(orgId);
      let r: Awaited<ReturnType<Billing["reserve"]>>;
      try {
        r = await d.billing.reserve({ requestId, orgId, appId, amountKrw });
      } catch (err) {
        recent.reserveEnded(orgId, "unknown"); // it may have reserved
        // It may also still commit after this answer: the hold is ended in the
        // background, asked again until the store answers (abandon.ts, reconciler.ts).
        d.reconciler.giveBack(requestId, async () => {
          try {
            return await d.billing.abandon({ requestId, orgId, appId, amountKrw, reservedAt });
          } finally {
            recent.forgetOrg(orgId);
          }
        });
        throw err;
      }
      recent.reserveEnded(orgId, r.ok ? { appId, amountKrw, now: d.now() } : "none");
      return r;
    },
    capture(c) {
      // Priced by what was made, never above what was held for the size asked.
      const amountKrw = Math.min(reserveAmountForSize(c.size), priceForPixels(c.pixels));
      return captureUntilKnown(() => chargeOnce(c, amountKrw), amountKrw, { deadlineAt: c.deadlineAt, now: d.now, sleep: d.sleep });
    },
    async release(requestId) {
      try {
        await d.billing.release(requestId);
      } catch (err) {
        // Not given back now, the hold would keep the credit until the sweeper: asked again
        // until the store answers (a release is idempotent, and this call will not capture).
        if (isStoreUnavailable(err)) {
          d.reconciler.giveBack(requestId, async () => {
            try {
              return await d.billing.release(requestId);
            } finally {
              recent.forgetAll();
            }
          });
        }
        throw err;
      } finally {
        recent.forgetAll(); // the hold's org is not known here; releases are the rare case
      }
    },
    allowance: (key) => readSpendAllowance(d.db, { orgId: key.orgId, appId: key.appId, limits: key.spendLimits, now: d.now() }, recent),
    async balances(orgId) {
      const b = await d.billing.balances(orgId);
      return { balanceKrw: b?.balanceKrw ?? 0, availableKrw: b?.availableKrw ?? 0 };
    },
    reconcile: (requestId, amountKrw, afterCapture) => d.reconciler.add(requestId, amountKrw, afterCapture),
  };
}
