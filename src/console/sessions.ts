// Console sessions: a random cookie value, stored hashed, tied to one user and the
// organization they act for, with its own CSRF token for every form.
//
// Two timeouts (OWASP ASVS 4.0 §3.3.2, level 2): a session ends SESSION_IDLE_MS after
// its last use, and SESSION_ABSOLUTE_MS after sign-in however busy it is. The stored
// expires_at is the earlier of the two; each use moves it forward (at most once per
// SESSION_TOUCH_MS, so a page that loads five things writes once), never past
// created_at + SESSION_ABSOLUTE_MS. "Sign out everywhere" ends every session of a user.
import type { Db } from "../db/index.ts";
import { newSecretToken } from "./tokens.ts";

/** Without use for this long, a session ends. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
/** However busy, a session ends this long after sign-in (the cookie's Max-Age too). */
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** A use this soon after the last recorded one does not write again. */
export const SESSION_TOUCH_MS = 60 * 1000;

export interface Session {
  userId: string;
  orgId: string;
  csrf: string;
  expiresAt: number;
}

export interface SessionTimes {
  idleMs: number;
  absoluteMs: number;
}

const DEFAULT_TIMES: SessionTimes = { idleMs: SESSION_IDLE_MS, absoluteMs: SESSION_ABSOLUTE_MS };

export function createSessions({ db, now, hash, times = DEFAULT_TIMES }: { db: Db; now: () => number; hash: (t: string) => string; times?: SessionTimes }) {
  const expiryAfterUse = (createdAt: number, t: number) => Math.min(createdAt + times.absoluteMs, t + times.idleMs);

  async function create(userId: string, orgId: string): Promise<{ token: string; session: Session }> {
    const token = newSecretToken();
    const csrf = newSecretToken();
    const t = now();
    const expiresAt = expiryAfterUse(t, t);
    await db.query(
      `INSERT INTO console_sessions (session_hash, user_id, org_id, csrf_token, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [hash(token), userId, orgId, csrf, new Date(t), new Date(expiresAt)],
    );
    return { token, session: { userId, orgId, csrf, expiresAt } };
  }

  /** The session of a cookie value, counting this as a use; null when unknown, idle too long or too old. */
  async function get(token: string | undefined): Promise<Session | null> {
    if (!token || token.length > 100) return null;
    const t = now();
    const key = hash(token);
    const rows = await db.query<{ user_id: string; org_id: string; csrf_token: string; created_at: number; expires_at: number }>(
      "SELECT user_id, org_id, csrf_token, created_at, expires_at FROM console_sessions WHERE session_hash = $1 AND expires_at > $2",
      [key, new Date(t)],
    );
    const r = rows[0];
    if (!r) return null;
    let expiresAt = Number(r.expires_at);
    const next = expiryAfterUse(Number(r.created_at), t);
    if (next - expiresAt >= SESSION_TOUCH_MS) {
      await db.query("UPDATE console_sessions SET expires_at = $2 WHERE session_hash = $1", [key, new Date(next)]);
      expiresAt = next;
    }
    return { userId: r.user_id, orgId: r.org_id, csrf: r.csrf_token, expiresAt };
  }

  async function destroy(token: string | undefined): Promise<void> {
    if (!token) return;
    await db.query("DELETE FROM console_sessions WHERE session_hash = $1", [hash(token)]);
    await sweep();
  }

  /** Ends every session of the user, in every browser and organization ("sign out everywhere"). */
  async function destroyAllOf(userId: string): Promise<void> {
    await db.query("DELETE FROM console_sessions WHERE user_id = $1", [userId]);
    await sweep();
  }

  // Expired sessions of anyone go at the same time: cheap, and no sweeper needed.
  const sweep = () => db.query("DELETE FROM console_sessions WHERE expires_at <= $1", [new Date(now())]);

  return { create, get, destroy, destroyAllOf };
}

export type Sessions = ReturnType<typeof createSessions>;
