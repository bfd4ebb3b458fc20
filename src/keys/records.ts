// Row shapes of api_keys (joined with its app and org) and their mapping to the
// objects the key service hands out. Never includes the hash or the key text.
import { keyLabel, type KeyKind } from "./format.ts";

export interface KeyRecord {
  keyId: string;
  appId: string;
  kind: KeyKind;
  prefix: string;
  last4: string;
  /** prefix…last4, safe to show and log. */
  label: string;
  createdAt: number;
  lastUsedAt: number | null;
  /** Set when the key was replaced by a reissue: valid until then. */
  expiresAt: number | null;
  /** Set while the operator suspends the app's access of this key's kind. */
  suspendedAt: number | null;
  replacedBy: string | null;
}

export interface KeyApp {
  appId: string;
  orgId: string;
  name: string;
  productEnabled: boolean;
  dailyLimitKrw: number | null;
  monthlyLimitKrw: number | null;
}

export interface KeyOrg {
  orgId: string;
  ownerUserId: string;
  dailyLimitKrw: number;
  refundPending: boolean;
  testQuota: "monthly" | "lifetime";
  /**
   * The owner asked for a low-balance e-mail that has not gone out yet: only then does a
   * capture need the claim query of src/billing/low-balance.ts (one round trip saved on
   * every other paid call).
   */
  lowBalanceWatched: boolean;
}

export interface KeyRow {
  key_id: string;
  app_id: string;
  kind: KeyKind;
  hash: string;
  prefix: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  deleted_at: number | null;
  /** When the operator suspended the app's access of this kind (KEY_COLUMNS). */
  suspended_at: number | null;
  replaced_by: string | null;
}

export interface KeyJoinRow extends KeyRow {
  org_id: string;
  app_name: string;
  product_enabled: boolean;
  app_daily_limit_krw: number | null;
  app_monthly_limit_krw: number | null;
  app_deleted_at: number | null;
  owner_user_id: string;
  org_daily_limit_krw: number;
  refund_pending: boolean;
  test_quota: "monthly" | "lifetime";
  low_balance_watched: boolean;
  /** The operator's sale switch, read in the same statement (null without its row). */
  product_status: string | null;
}

/** The apps column that holds the operator's suspension of an app's access of a kind (migration 0011). */
export function suspensionColumn(kind: KeyKind): "live_suspended_at" | "test_suspended_at" {
  return kind === "live" ? "live_suspended_at" : "test_suspended_at";
}

/** That suspension for the key `k` of the app `a`. */
export const KEY_SUSPENDED_AT_SQL = `CASE k.kind WHEN 'live' THEN a.${suspensionColumn("live")} ELSE a.${suspensionColumn("test")} END`;

/**
 * The key's columns, its suspension included: an operator's suspension is its app's
 * access of the key's kind (migration 0011, docs/DECISIONS.md "Suspension"), so every
 * key of that app and kind reads it. Needs apps as `a`: select FROM KEYS_WITH_APP.
 */
export const KEY_COLUMNS =
  "k.key_id, k.app_id, k.kind, k.hash, k.prefix, k.last4, k.created_at, k.last_used_at, k.expires_at, k.deleted_at, k.replaced_by, " +
  `${KEY_SUSPENDED_AT_SQL} AS suspended_at`;
export const KEYS_WITH_APP = "api_keys k JOIN apps a ON a.app_id = k.app_id";

/**
 * A key with its app and org, and the product's sale switch (its one row), so a paid
 * call learns all it checks before the body in one round trip. Each lookup
 * below adds its own WHERE.
 */
const KEY_WITH_APP_AND_ORG_SQL = `
  SELECT ${KEY_COLUMNS},
         a.org_id, a.name AS app_name, a.product_enabled,
         a.daily_limit_krw AS app_daily_limit_krw, a.monthly_limit_krw AS app_monthly_limit_krw,
         a.deleted_at AS app_deleted_at,
         o.owner_user_id, o.daily_limit_krw AS org_daily_limit_krw, o.refund_pending, o.test_quota,
         (o.low_balance_threshold_krw IS NOT NULL AND NOT o.low_balance_notified) AS low_balance_watched,
         ps.status AS product_status
    FROM ${KEYS_WITH_APP}
    JOIN organizations o ON o.org_id = a.org_id
    LEFT JOIN product_status ps ON ps.singleton`;

/** Found by the key's hash (an index seek on api_keys.hash). */
export const LOOKUP_BY_HASH_SQL = `${KEY_WITH_APP_AND_ORG_SQL}
   WHERE k.hash = $1`;

/** The app's current key of a kind (not deleted, not replaced by a reissue): at most one. */
export const CURRENT_KEY_OF_APP_SQL = `${KEY_WITH_APP_AND_ORG_SQL}
   WHERE k.app_id = $1 AND k.kind = $2 AND k.deleted_at IS NULL AND k.replaced_by IS NULL`;

export function toKeyRecord(r: KeyRow): KeyRecord {
  return {
    keyId: r.key_id,
    appId: r.app_id,
    kind: r.kind,
    prefix: r.prefix,
    last4: r.last4,
    label: keyLabel(r.prefix, r.last4),
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    suspendedAt: r.suspended_at,
    replacedBy: r.replaced_by,
  };
}

export function toKeyApp(r: KeyJoinRow): KeyApp {
  return {
    appId: r.app_id,
    orgId: r.org_id,
    name: r.app_name,
    productEnabled: r.product_enabled,
    dailyLimitKrw: r.app_daily_limit_krw,
    monthlyLimitKrw: r.app_monthly_limit_krw,
  };
}

export function toKeyOrg(r: KeyJoinRow): KeyOrg {
  return {
    orgId: r.org_id,
    ownerUserId: r.owner_user_id,
    dailyLimitKrw: r.org_daily_limit_krw,
    refundPending: r.refund_pending,
    testQuota: r.test_quota,
    lowBalanceWatched: r.low_balance_watched,
  };
}
