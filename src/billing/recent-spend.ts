// The spending counters a live key's answer last showed, kept for a second per (org,
// app): a flood of refusals from one app (400 bad parameter, 429 over the org's cap)
// otherwise reads Postgres once per refusal just to fill X-RateLimit-*.
// Only the counters are kept; the limits come from the call's own key row and the
// period from its own clock, so a limit changed in the console or a new KST day show at
// once. What a second can miss is money moved by another process (or by this process's
// reconciler): the headers may be up to RECENT_SPEND_MEMORY_MS behind it. Reserves,
// captures and releases made through the gateway here are seen at once (reserving and
// reserveEnded, forgetOrg, forgetAll). Never used to decide money: reserve re-reads the
// counters under the org's lock (docs/DECISIONS.md "Remembered spending counters").
import { nextKstMidnight } from "./kst.ts";
import type { SpendNow } from "./spend.ts";

export const RECENT_SPEND_MEMORY_MS = 1_000;
/** At most this many (org, app) pairs at once; when full the memory starts over. */
export const RECENT_SPEND_MEMORY_MAX = 10_000;

export interface RecentSpend {
  /** Counters read or reported at most RECENT_SPEND_MEMORY_MS before `now`, in `now`'s KST day. */
  get(orgId: string, appId: string, now: number): SpendNow | undefined;
  /** Call before reading the counters; pass the answer to remember(). */
  reading(): number;
  /**
   * Kept only if nothing was forgotten since reading() (the read may predate that change)
   * and no reserve of the org is running (the counters may or may not hold its hold).
   */
  remember(orgId: string, appId: string, spend: SpendNow, at: number, reading: number): void;
  /** A reserve for the org starts: nothing about the org is kept until it ends. */
  reserving(orgId: string): void;
  /**
   * That reserve ended. `hold`: it reserved `amountKrw` at `now` for the app, which
   * counts towards the org's day and the app's day and month, so the kept counters grow
   * by it instead of being read again (an org at its concurrency cap reserves on every
   * freed slot); "none": it reserved nothing; "unknown": it may have (an error).
   */
  reserveEnded(orgId: string, hold: { appId: string; amountKrw: number; now: number } | "none" | "unknown"): void;
  /** Money moved for this org by an amount not known here: every app's counters share its daily one. */
  forgetOrg(orgId: string): void;
  forgetAll(): void;
}

interface Kept {
  spend: SpendNow;
  at: number;
}

/**
 * Counters taken at `at` are no longer `now`'s: a KST day began in between (a KST month
 * starts at a KST midnight, so this covers both periods).
 */
const dayEnded = (at: number, now: number) => nextKstMidnight(at) <= now;

export function createRecentSpend(): RecentSpend {
  let orgs = new Map<string, Map<string, Kept>>();
  let size = 0;
  let generation = 0;
  /** Reserves running per org. */
  const reserves = new Map<string, number>();
  const forgetOrg = (orgId: string) => {
    generation++;
    const apps = orgs.get(orgId);
    if (!apps) return;
    size -= apps.size;
    orgs.delete(orgId);
  };
  return {
    get(orgId, appId, now) {
      const k = orgs.get(orgId)?.get(appId);
      if (!k || now - k.at >= RECENT_SPEND_MEMORY_MS || now < k.at || dayEnded(k.at, now)) return undefined;
      return k.spend;
    },
    reading: () => generation,
    remember(orgId, appId, spend, at, reading) {
      if (reading !== generation || reserves.has(orgId)) return;
      if (size >= RECENT_SPEND_MEMORY_MAX) {
        orgs = new Map();
        size = 0;
      }
      let apps = orgs.get(orgId);
      if (!apps) orgs.set(orgId, (apps = new Map()));
      if (!apps.has(appId)) size++;
      apps.set(appId, { spend, at });
    },
    reserving(orgId) {
      generation++; // a read in flight may or may not see this hold
      reserves.set(orgId, (reserves.get(orgId) ?? 0) + 1);
    },
    reserveEnded(orgId, hold) {
      const running = (reserves.get(orgId) ?? 1) - 1;
      if (running > 0) reserves.set(orgId, running);
      else reserves.delete(orgId);
      generation++;
      if (hold === "unknown") return forgetOrg(orgId);
      if (hold === "none") return;
      const apps = orgs.get(orgId);
      if (!apps) return;
      for (const [id, k] of apps) {
        if (dayEnded(k.at, hold.now)) {
          // This hold counts towards a new day's counters, not these.
          apps.delete(id);
          size--;
          continue;
        }
        const s = k.spend;
        const a = hold.amountKrw;
        k.spend =
          id === hold.appId
            ? { orgDayKrw: s.orgDayKrw + a, appDayKrw: s.appDayKrw + a, appMonthKrw: s.appMonthKrw + a }
            : { ...s, orgDayKrw: s.orgDayKrw + a };
      }
    },
    forgetOrg,
    forgetAll() {
      generation++;
      orgs = new Map();
      size = 0;
    },
  };
}
