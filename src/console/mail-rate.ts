// Rate limits on sign-up and sign-in mails, per address and per client IP, so the
// console cannot be used to flood someone's inbox or to mail-bomb from one host.
// Counted in the database so every process sees the same numbers.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";

export interface MailRateLimits {
  perEmail: number;
  perIp: number;
  windowMs: number;
}

export const DEFAULT_MAIL_LIMITS: MailRateLimits = { perEmail: 5, perIp: 20, windowMs: 60 * 60 * 1000 };

export function createMailRate({ db, now, limits = DEFAULT_MAIL_LIMITS }: { db: Db; now: () => number; limits?: MailRateLimits }) {
  /** Counts one mail for both scopes, or refuses (nothing counted) when either is full. */
  async function take(email: string, ip: string): Promise<{ ok: true } | Failure> {
    const t = now();
    const since = new Date(t - limits.windowMs);
    const scopes: [string, number][] = [
      [`email:${email.toLowerCase()}`, limits.perEmail],
      [`ip:${ip}`, limits.perIp],
    ];
    return db.transaction(async (tx) => {
      for (const [scope, max] of scopes) {
        // Serialises concurrent requests of one scope so two cannot both take the last slot.
        await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [scope]);
        const rows = await tx.query<{ n: number; oldest: number | null }>(
          "SELECT count(*) AS n, min(created_at) AS oldest FROM console_mail_attempts WHERE scope = $1 AND created_at > $2",
          [scope, since],
        );
        if (rows[0].n >= max) {
          const retry = Math.max(1, Math.ceil(((rows[0].oldest ?? t) + limits.windowMs - t) / 1000));
          return fail("rate_limited", "Too many e-mails were requested. Try again later.", retry);
        }
      }
      for (const [scope] of scopes) {
        await tx.query("DELETE FROM console_mail_attempts WHERE scope = $1 AND created_at <= $2", [scope, since]);
        await tx.query("INSERT INTO console_mail_attempts (scope, created_at) VALUES ($1, $2)", [scope, new Date(t)]);
      }
      return { ok: true as const };
    });
  }

  return { take };
}

export type MailRate = ReturnType<typeof createMailRate>;
