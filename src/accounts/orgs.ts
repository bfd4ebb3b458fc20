// Users and organizations. Signing up creates the user and the organization it owns
// in one transaction; the org is where credit and limits live.
import type { Db } from "../db/index.ts";
import { isUniqueViolation } from "../db/errors.ts";
import { newId } from "../db/random-id.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { checkLimit, normaliseEmail, ORG_DAILY_LIMIT_MAX_KRW } from "./validate.ts";

export type TestQuotaMode = "monthly" | "lifetime";

export interface OrgView {
  orgId: string;
  ownerUserId: string;
  balanceKrw: number;
  /** balance minus open holds. */
  availableKrw: number;
  dailyLimitKrw: number;
  refundPending: boolean;
  testQuota: TestQuotaMode;
  createdAt: number;
}

export interface UserView {
  userId: string;
  email: string;
  verifiedAt: number | null;
  createdAt: number;
  /** Organizations this user owns. */
  orgIds: string[];
}

export interface OrgPatch {
  dailyLimitKrw?: number;
  refundPending?: boolean;
  testQuota?: TestQuotaMode;
}

interface OrgRow {
  org_id: string;
  owner_user_id: string;
  balance_krw: number;
  held_krw: number;
  daily_limit_krw: number;
  refund_pending: boolean;
  test_quota: TestQuotaMode;
  created_at: number;
}

const ORG_COLUMNS = "org_id, owner_user_id, balance_krw, held_krw, daily_limit_krw, refund_pending, test_quota, created_at";

function toOrg(r: OrgRow): OrgView {
  return {
    orgId: r.org_id,
    ownerUserId: r.owner_user_id,
    balanceKrw: r.balance_krw,
    availableKrw: r.balance_krw - r.held_krw,
    dailyLimitKrw: r.daily_limit_krw,
    refundPending: r.refund_pending,
    testQuota: r.test_quota,
    createdAt: r.created_at,
  };
}

export function createOrgs({ db, now }: { db: Db; now: () => number }) {
  async function createOrgWithOwner(
    email: string,
    opts: { verified: boolean },
  ): Promise<{ ok: true; orgId: string; userId: string } | Failure> {
    const address = normaliseEmail(email);
    if (!address) return fail("invalid_parameter", "Not an e-mail address");
    const userId = newId("usr");
    const orgId = newId("org");
    const t = new Date(now());
    try {
      await db.transaction(async (tx) => {
        await tx.query("INSERT INTO users (user_id, email, verified_at, created_at) VALUES ($1, $2, $3, $4)", [
          userId,
          address,
          opts.verified ? t : null,
          t,
        ]);
        await tx.query("INSERT INTO organizations (org_id, owner_user_id, created_at) VALUES ($1, $2, $3)", [
          orgId,
          userId,
          t,
        ]);
      });
    } catch (e) {
      if (isUniqueViolation(e)) return fail("conflict", "This e-mail address is already registered");
      throw e;
    }
    return { ok: true, orgId, userId };
  }

  /** Marks the user's address as verified (idempotent: the first time is kept). */
  async function markEmailVerified(userId: string): Promise<{ ok: true } | Failure> {
    const rows = await db.query(
      "UPDATE users SET verified_at = COALESCE(verified_at, $2) WHERE user_id = $1 RETURNING 1",
      [userId, new Date(now())],
    );
    return rows.length > 0 ? { ok: true } : fail("not_found", "User not found");
  }

  async function getUser(userId: string): Promise<UserView | null> {
    return readUser("u.user_id = $1", userId);
  }

  async function findUserByEmail(email: string): Promise<UserView | null> {
    return readUser("lower(u.email) = lower($1)", email.trim());
  }

  async function readUser(where: string, value: string): Promise<UserView | null> {
    const rows = await db.query<{ user_id: string; email: string; verified_at: number | null; created_at: number }>(
      `SELECT u.user_id, u.email, u.verified_at, u.created_at FROM users u WHERE ${where}`,
      [value],
    );
    const u = rows[0];
    if (!u) return null;
    const orgs = await db.query<{ org_id: string }>(
      "SELECT org_id FROM organizations WHERE owner_user_id = $1 ORDER BY created_at, org_id",
      [u.user_id],
    );
    return {
      userId: u.user_id,
      email: u.email,
      verifiedAt: u.verified_at,
      createdAt: u.created_at,
      orgIds: orgs.map((o) => o.org_id),
    };
  }

  async function getOrg(orgId: string): Promise<OrgView | null> {
    const rows = await db.query<OrgRow>(`SELECT ${ORG_COLUMNS} FROM organizations WHERE org_id = $1`, [orgId]);
    return rows[0] ? toOrg(rows[0]) : null;
  }

  /** Owner settings (daily limit) and operator states (refund, lifetime test quota). */
  async function updateOrg(orgId: string, patch: OrgPatch): Promise<({ ok: true } & OrgView) | Failure> {
    const sets: string[] = [];
    const params: unknown[] = [orgId];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (patch.dailyLimitKrw !== undefined) {
      const bad = checkLimit(patch.dailyLimitKrw, ORG_DAILY_LIMIT_MAX_KRW, "Daily limit");
      if (bad) return fail("invalid_parameter", bad);
      set("daily_limit_krw", patch.dailyLimitKrw);
    }
    if (patch.refundPending !== undefined) set("refund_pending", patch.refundPending);
    if (patch.testQuota !== undefined) {
      if (patch.testQuota !== "monthly" && patch.testQuota !== "lifetime") {
        return fail("invalid_parameter", "Test quota must be monthly or lifetime");
      }
      set("test_quota", patch.testQuota);
    }
    const sql =
      sets.length > 0
        ? `UPDATE organizations SET ${sets.join(", ")} WHERE org_id = $1 RETURNING ${ORG_COLUMNS}`
        : `SELECT ${ORG_COLUMNS} FROM organizations WHERE org_id = $1`;
    const rows = await db.query<OrgRow>(sql, params);
    return rows[0] ? { ok: true, ...toOrg(rows[0]) } : fail("not_found", "Organization not found");
  }

  return { createOrgWithOwner, markEmailVerified, getUser, findUserByEmail, getOrg, updateOrg };
}
