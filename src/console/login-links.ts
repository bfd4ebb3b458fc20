// One-time links mailed for sign-up (address verification) and sign-in. A link works
// once, within LINK_TTL_MS; expired, used and unknown links fail alike so a guesser
// learns nothing.
import type { Db } from "../db/index.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { newSecretToken } from "./tokens.ts";

export const LINK_TTL_MS = 30 * 60 * 1000;

export type LinkPurpose = "signup" | "signin";

export function createLoginLinks({ db, now, hash, ttlMs = LINK_TTL_MS }: { db: Db; now: () => number; hash: (t: string) => string; ttlMs?: number }) {
  async function issue(purpose: LinkPurpose, email: string): Promise<string> {
    const token = newSecretToken();
    const t = now();
    await db.query(
      `INSERT INTO console_login_tokens (token_hash, purpose, email, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
      [hash(token), purpose, email, new Date(t), new Date(t + ttlMs)],
    );
    return token;
  }

  /** Marks the link used and returns what it was for; a second call fails. */
  async function consume(token: string): Promise<{ ok: true; purpose: LinkPurpose; email: string } | Failure> {
    if (!token || token.length > 100) return expired();
    const t = new Date(now());
    const rows = await db.query<{ purpose: LinkPurpose; email: string }>(
      `UPDATE console_login_tokens SET used_at = $2
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
        RETURNING purpose, email`,
      [hash(token), t],
    );
    return rows[0] ? { ok: true, purpose: rows[0].purpose, email: rows[0].email } : expired();
  }

  /** What a link is for, without using it (the page that asks the person to continue); fails as consume does. */
  async function peek(token: string): Promise<{ ok: true; purpose: LinkPurpose; email: string } | Failure> {
    if (!token || token.length > 100) return expired();
    const rows = await db.query<{ purpose: LinkPurpose; email: string }>(
      "SELECT purpose, email FROM console_login_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2",
      [hash(token), new Date(now())],
    );
    return rows[0] ? { ok: true, purpose: rows[0].purpose, email: rows[0].email } : expired();
  }

  /**
   * Voids every unused link to the user's address ("sign out everywhere"): a link mailed
   * before, still in an inbox someone else may read, no longer signs in. Matched as the
   * account is (lower()): any link that would open this account.
   */
  async function voidAllOf(userId: string): Promise<void> {
    await db.query(
      `UPDATE console_login_tokens t SET used_at = $2
         FROM users u
        WHERE u.user_id = $1 AND lower(t.email) = lower(u.email) AND t.used_at IS NULL`,
      [userId, new Date(now())],
    );
  }

  return { issue, consume, peek, voidAllOf };
}

const expired = () => fail("not_found", "This link has expired or was already used. Ask for a new one.");

export type LoginLinks = ReturnType<typeof createLoginLinks>;
