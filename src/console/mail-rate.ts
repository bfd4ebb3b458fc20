// Rate limits on sign-up and sign-in requests. Each limit guards one thing, and counts
// only the callers it guards against, so one caller's requests do not lock out another
// who shares an address (an office, a mobile carrier's NAT):
// - per e-mail address, both forms: the inbox, against being flooded with links;
// - per client address, sign-up only: mail to addresses nobody has proven (a sign-up
//   mails whatever address it is given; a sign-in mails only an account's owner);
// - per client address, both forms, a short window: a flood brake on the work a
//   request costs. Its window is a minute, so a caller it stops is back a minute after
//   the flood ends, not an hour.
// The same scopes are counted whether or not the address has an account, so the
// limits tell nothing about who has one. Counted in the database so every process
// sees the same numbers.
import { canonicalEmail } from "../accounts/validate.ts";
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";

export interface RateWindow {
  max: number;
  windowMs: number;
}

export interface MailRateLimits {
  perEmail: RateWindow;
  signUpsPerIp: RateWindow;
  requestsPerIp: RateWindow;
}

const HOUR = 60 * 60 * 1000;

export const DEFAULT_MAIL_LIMITS: MailRateLimits = {
  perEmail: { max: 5, windowMs: HOUR },
  signUpsPerIp: { max: 20, windowMs: HOUR },
  requestsPerIp: { max: 30, windowMs: 60 * 1000 },
};

export type MailKind = "signup" | "signin";

export function createMailRate({ db, now, limits = DEFAULT_MAIL_LIMITS }: { db: Db; now: () => number; limits?: MailRateLimits }) {
  /** Counts one request in each of its scopes, or refuses (nothing counted) when any is full. `email` passed normaliseEmail. */
  async function take(kind: MailKind, email: string, ip: string): Promise<{ ok: true } | Failure> {
    const t = now();
    const scopes: [string, RateWindow][] = [
      // One count per mailbox however it is spelt (trailing dot, quotes, +tag, case).
      [`email:${canonicalEmail(email)}`, limits.perEmail],
      ...(kind === "signup" ? ([[`signup-ip:${ip}`, limits.signUpsPerIp]] as [string, RateWindow][]) : []),
      [`ip-minute:${ip}`, limits.requestsPerIp],
    ];
    return db.transaction(async (tx) => {
      for (const [scope, w] of scopes) {
        // Serialises concurrent requests of one scope so two cannot both take the last slot.
        await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [scope]);
        const rows = await tx.query<{ n: number; oldest: number | null }>(
          "SELECT count(*) AS n, min(created_at) AS oldest FROM console_mail_attempts WHERE scope = $1 AND created_at > $2",
          [scope, new Date(t - w.windowMs)],
        );
        if (rows[0].n >= w.max) {
          const retry = Math.max(1, Math.ceil(((rows[0].oldest ?? t) + w.windowMs - t) / 1000));
          return fail("rate_limited", "Too many e-mails were requested. Try again later.", retry);
        }
      }
      for (const [scope, w] of scopes) {
        await tx.query("DELETE FROM console_mail_attempts WHERE scope = $1 AND created_at <= $2", [scope, new Date(t - w.windowMs)]);
        await tx.query("INSERT INTO console_mail_attempts (scope, created_at) VALUES ($1, $2)", [scope, new Date(t)]);
      }
      return { ok: true as const };
    });
  }

  return { take };
}

export type MailRate = ReturnType<typeof createMailRate>;
