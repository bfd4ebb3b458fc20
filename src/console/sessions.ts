// Console sessions: a random cookie value, stored hashed, tied to one user and the
// organization they act for, with its own CSRF token for every form.
import type { Db } from "../db/index.ts";
import { newSecretToken } from "./tokens.ts";

export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface Session {
  userId: string;
  orgId: string;
  csrf: string;
  expiresAt: number;
}

export function createSessions({ db, now, hash, ttlMs = SESSION_TTL_MS }: { db: Db; now: () => number; hash: (t: string) => string; ttlMs?: number }) {
  async function create(userId: string, orgId: string): Promise<{ token: string; session: Session }> {
    const token = newSecretToken();
    const csrf = newSecretToken();
    const t = now();
    await db.query(
      `INSERT INTO console_sessions (session_hash, user_id, org_id, csrf_token, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [hash(token), userId, orgId, csrf, new Date(t), new Date(t + ttlMs)],
    );
    return { token, session: { userId, orgId, csrf, expiresAt: t + ttlMs } };
  }

  async function get(token: string | undefined): Promise<Session | null> {
    if (!token || token.length > 100) return null;
    const rows = await db.query<{ user_id: string; org_id: string; csrf_token: string; expires_at: number }>(
      "SELECT user_id, org_id, csrf_token, expires_at FROM console_sessions WHERE session_hash = $1 AND expires_at > $2",
      [hash(token), new Date(now())],
    );
    const r = rows[0];
    return r ? { userId: r.user_id, orgId: r.org_id, csrf: r.csrf_token, expiresAt: r.expires_at } : null;
  }

  async function destroy(token: string | undefined): Promise<void> {
    if (!token) return;
    await db.query("DELETE FROM console_sessions WHERE session_hash = $1", [hash(token)]);
    // Expired sessions of anyone go at the same time: cheap, and no sweeper needed.
    await db.query("DELETE FROM console_sessions WHERE expires_at <= $1", [new Date(now())]);
  }

  return { create, get, destroy };
}

export type Sessions = ReturnType<typeof createSessions>;
