// The key service: issuing, reissuing, suspending and deleting keys, and the
// gateway's lookup of a presented key. Key text exists only in memory: it is
// returned once by issue/reissue and otherwise only its HMAC, its type prefix + 4
// characters and its last 4 characters are stored.
//
// Suspension is the operator's and belongs to the app's access of one kind, not to one
// key (docs/DECISIONS.md "Suspension"): while it holds, every key of that app and kind
// is refused, none is issued or reissued, and the customer cannot delete one.
import type { Db } from "../db/index.ts";
import { newId } from "../db/random-id.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { displayParts, generateKey, isWellFormedKey, type KeyKind } from "./format.ts";
import { constantTimeEqual, createKeyHasher, type KeyHasher } from "./hash.ts";
import {
  CURRENT_KEY_OF_APP_SQL,
  KEY_COLUMNS,
  KEY_SUSPENDED_AT_SQL,
  KEYS_WITH_APP,
  LOOKUP_BY_HASH_SQL,
  toKeyApp,
  toKeyOrg,
  suspensionColumn,
  toKeyRecord,
  type KeyApp,
  type KeyJoinRow,
  type KeyOrg,
  type KeyRecord,
  type KeyRow,
} from "./records.ts";
import { REISSUE_GRACE_MS, rejectReason, type KeyRejectReason } from "./states.ts";
import { createUnknownHashes } from "./unknown-hashes.ts";
import type { KnownKeys } from "./known-keys.ts";

export interface KeyServiceDeps {
  db: Db;
  now: () => number;
  /** From loadOrCreatePepper. */
  pepper: string;
  /** last_used_at is written at most this often per key (default one minute). */
  touchIntervalMs?: number;
  /**
   * Key rows remembered between calls (known-keys.ts). Only with a `db` that tells it of
   * changes (src/db/write-watch.ts), as the service wiring does; without, every lookup reads.
   */
  known?: KnownKeys;
}

export type LookupResult =
  | {
      ok: true;
      key: KeyRecord;
      app: KeyApp;
      org: KeyOrg;
      /** The product's sale switch as stored, read with the key (src/accounts/product-status.ts says what it means). */
      productStatus: string | null;
    }
  | { ok: false; code: "invalid_api_key"; reason: KeyRejectReason }
  /** A suspended key is one we issued: whose it is goes into its refusal's request-log row. */
  | { ok: false; code: "key_suspended"; reason: "suspended"; owner: KeyOwner };

/** The key's own IDs and its app's and org's. */
export interface KeyOwner {
  keyId: string;
  kind: KeyRecord["kind"];
  appId: string;
  orgId: string;
}

export type IssueResult = { ok: true; keyId: string; key: string } | Failure;
export type ReissueResult = { ok: true; keyId: string; key: string; previousValidUntil: number } | Failure;
export type KeyChangeResult = { ok: true } | Failure;

const TOUCH_CACHE_MAX = 10_000;

/** What a customer is told of a change refused by the suspension (the console shows it too). */
export function suspendedTitle(kind: KeyKind): string {
  return `The operator suspended this app's ${kind} keys: they are refused, and none is issued, reissued or deleted, until the operator lifts it. Contact support.`;
}

export function createKeyService({ db, now, pepper, touchIntervalMs = 60_000, known }: KeyServiceDeps) {
  let hasherPromise: Promise<KeyHasher> | undefined;
  const hasher = () => (hasherPromise ??= createKeyHasher(pepper));
  // When this process last wrote last_used_at per key, to skip even the query.
  const lastTouch = new Map<string, number>();
  const unknown = createUnknownHashes(now);

  async function insertKey(tx: Db, appId: string, kind: KeyKind, keyId: string): Promise<string> {
    const key = generateKey(kind);
    const { prefix, last4 } = displayParts(key);
    const hash = await (await hasher()).hash(key);
    await tx.query(
      `INSERT INTO api_keys (key_id, app_id, kind, hash, prefix, last4, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [keyId, appId, kind, hash, prefix, last4, new Date(now())],
    );
    return key;
  }

  /** The app's owner verification, deletion and suspension state, locking the app row. */
  async function lockApp(tx: Db, appId: string) {
    const rows = await tx.query<{
      deleted_at: number | null;
      verified_at: number | null;
      live_suspended_at: number | null;
      test_suspended_at: number | null;
    }>(
      `SELECT a.deleted_at, u.verified_at, a.live_suspended_at, a.test_suspended_at
         FROM apps a
         JOIN organizations o ON o.org_id = a.org_id
         JOIN users u ON u.user_id = o.owner_user_id
        WHERE a.app_id = $1
          FOR UPDATE OF a`,
      [appId],
    );
    return rows[0];
  }

  const unverified = () => fail("conflict", "The organization owner's e-mail must be verified to issue a live key");
  const suspendedAt = (app: { live_suspended_at: number | null; test_suspended_at: number | null }, kind: KeyKind) =>
    app[suspensionColumn(kind)];
  const suspended = (kind: KeyKind) => fail("key_suspended", suspendedTitle(kind));

  /**
   * Issues the app's first key of a kind. Refused (conflict) if the app already has a
   * current key of that kind: getting a second one is what reissue is for, with its
   * 7-day overlap, so a stray second "issue" can't leave two keys without an end date.
   * Refused (key_suspended) while the operator suspends that kind of the app's access.
   */
  function issue(appId: string, kind: KeyKind): Promise<IssueResult> {
    return db.transaction(async (tx) => {
      const app = await lockApp(tx, appId);
      if (!app || app.deleted_at !== null) return fail("not_found", "App not found");
      if (suspendedAt(app, kind) !== null) return suspended(kind);
      if (kind === "live" && app.verified_at === null) return unverified();
      const current = await tx.query(
        `SELECT 1 FROM api_keys WHERE app_id = $1 AND kind = $2 AND deleted_at IS NULL AND replaced_by IS NULL`,
        [appId, kind],
      );
      if (current.length > 0) return fail("conflict", `This app already has a ${kind} key; reissue it instead`);
      const keyId = newId("key");
      const key = await insertKey(tx, appId, kind, keyId);
      return { ok: true as const, keyId, key };
    });
  }

  /**
   * Replaces a current key with a new one. The old key keeps working for 7 more days
   * (or less, if it already had an earlier end). Suspended keys are not reissued: the
   * operator lifts the suspension first.
   */
  function reissue(keyId: string): Promise<ReissueResult> {
    return db.transaction(async (tx) => {
      const rows = await tx.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_APP} WHERE k.key_id = $1 FOR UPDATE OF k`, [
        keyId,
      ]);
      const old = rows[0];
      if (!old || old.deleted_at !== null) return fail("not_found", "Key not found");
      const app = await lockApp(tx, old.app_id);
      if (!app || app.deleted_at !== null) return fail("not_found", "Key not found");
      if (old.replaced_by !== null) return fail("conflict", "This key was already replaced; reissue its replacement");
      // Read under the app's lock, so a suspension that commits meanwhile is seen.
      if (suspendedAt(app, old.kind) !== null) return suspended(old.kind);
      if (old.kind === "live" && app.verified_at === null) return unverified();

      const t = now();
      const validUntil = Math.min(old.expires_at ?? Infinity, t + REISSUE_GRACE_MS);
      const newKeyId = newId("key");
      // Old key first (it stops being "current"), then the new one: the unique index
      // on current keys sees one at a time; the replaced_by reference is checked at commit.
      await tx.query("UPDATE api_keys SET replaced_by = $2, expires_at = $3 WHERE key_id = $1", [
        keyId,
        newKeyId,
        new Date(validUntil),
      ]);
      const key = await insertKey(tx, old.app_id, old.kind, newKeyId);
      return { ok: true as const, keyId: newKeyId, key, previousValidUntil: validUntil };
    });
  }

  /** The key's app and kind, if the key exists (deleted or not). */
  async function keyAccess(keyId: string) {
    const rows = await db.query<{ app_id: string; kind: KeyKind; deleted_at: number | null }>(
      "SELECT app_id, kind, deleted_at FROM api_keys WHERE key_id = $1",
      [keyId],
    );
    return rows[0];
  }

  /**
   * Operator suspension of the key's app's access of its kind: every key of that app and
   * kind (the overlap partner of a reissue included) answers 403 key_suspended until
   * unsuspended. A deleted key names nothing to suspend (not_found).
   */
  async function suspend(keyId: string): Promise<KeyChangeResult> {
    const k = await keyAccess(keyId);
    if (!k || k.deleted_at !== null) return fail("not_found", "Key not found");
    const col = suspensionColumn(k.kind); // from the stored kind, never from input
    await db.query(`UPDATE apps SET ${col} = COALESCE(${col}, $2) WHERE app_id = $1`, [k.app_id, new Date(now())]);
    return { ok: true };
  }

  /** Lifts it; any key of the app and kind names it, a deleted one too (the operator may have deleted the key it named). */
  async function unsuspend(keyId: string): Promise<KeyChangeResult> {
    const k = await keyAccess(keyId);
    if (!k) return fail("not_found", "Key not found");
    await db.query(`UPDATE apps SET ${suspensionColumn(k.kind)} = NULL WHERE app_id = $1`, [k.app_id]);
    return { ok: true };
  }

  /** Soft delete: the row stays for the request log's references; the key stops working at once. The operator's: any state. */
  async function remove(keyId: string): Promise<KeyChangeResult> {
    const rows = await db.query("UPDATE api_keys SET deleted_at = COALESCE(deleted_at, $2) WHERE key_id = $1 RETURNING 1", [
      keyId,
      new Date(now()),
    ]);
    return rows.length > 0 ? { ok: true } : fail("not_found", "Key not found");
  }

  /**
   * The customer's delete: refused (key_suspended) while the operator suspends the app's
   * access of the key's kind, so a suspended key stays in view, and its suspension with it.
   */
  async function removeByOwner(keyId: string): Promise<KeyChangeResult> {
    const rows = await db.query<{ done: boolean }>(
      `UPDATE api_keys k SET deleted_at = COALESCE(k.deleted_at, $2)
         FROM apps a
        WHERE k.key_id = $1 AND a.app_id = k.app_id
          AND ${KEY_SUSPENDED_AT_SQL} IS NULL
        RETURNING true AS done`,
      [keyId, new Date(now())],
    );
    if (rows.length > 0) return { ok: true };
    const k = await keyAccess(keyId);
    return k ? suspended(k.kind) : fail("not_found", "Key not found");
  }

  /** The kinds of the app's access the operator suspends now (the console says so where it would offer a new key). */
  async function suspendedKinds(appId: string): Promise<KeyKind[]> {
    const rows = await db.query<{ live_suspended_at: number | null; test_suspended_at: number | null }>(
      "SELECT live_suspended_at, test_suspended_at FROM apps WHERE app_id = $1",
      [appId],
    );
    return rows[0] ? (["test", "live"] as const).filter((kind) => rows[0][suspensionColumn(kind)] !== null) : [];
  }

  /** The gateway's check of a presented X-Api-Key value. */
  async function lookup(keyText: string | null | undefined): Promise<LookupResult> {
    const invalid = (reason: KeyRejectReason): LookupResult => ({ ok: false, code: "invalid_api_key", reason });
    if (!keyText) return invalid("missing");
    if (!isWellFormedKey(keyText)) return invalid("malformed");
    const hash = await (await hasher()).hash(keyText);
    if (unknown.has(hash)) return invalid("unknown");
    const remembered = known?.get(hash);
    if (remembered) return judge(remembered);
    const reading = known?.reading() ?? 0;
    // Prepared once per connection: planning this four-table join took ~0.2 ms of
    // Postgres CPU on every call, several times its execution.
    const rows = await db.query<KeyJoinRow>(LOOKUP_BY_HASH_SQL, [hash], { prepare: "pd_key_by_hash" });
    const row = rows[0];
    if (!row || !constantTimeEqual(row.hash, hash)) {
      unknown.add(hash);
      return invalid("unknown");
    }
    known?.remember(hash, row, reading);
    return judge(row);
  }

  /**
   * The app's current key of a kind, judged exactly as lookup() judges a presented key.
   * For callers already known to act for the app (the console's playground), which
   * have no key text: keys are stored only as hashes.
   */
  async function lookupCurrent(appId: string, kind: KeyKind): Promise<LookupResult> {
    const rows = await db.query<KeyJoinRow>(CURRENT_KEY_OF_APP_SQL, [appId, kind]);
    return rows[0] ? judge(rows[0]) : { ok: false, code: "invalid_api_key", reason: "unknown" };
  }

  function judge(row: KeyJoinRow): LookupResult {
    const reason = rejectReason(
      {
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
        expiresAt: row.expires_at,
        deletedAt: row.deleted_at,
        appDeletedAt: row.app_deleted_at,
        suspendedAt: row.suspended_at,
      },
      now(),
    );
    if (reason === "suspended") {
      return { ok: false, code: "key_suspended", reason, owner: { keyId: row.key_id, kind: row.kind, appId: row.app_id, orgId: row.org_id } };
    }
    if (reason !== null) return { ok: false, code: "invalid_api_key", reason };
    return { ok: true, key: toKeyRecord(row), app: toKeyApp(row), org: toKeyOrg(row), productStatus: row.product_status };
  }

  /** Records a use of the key; writes at most once per touchIntervalMs per key. */
  async function touch(keyId: string): Promise<void> {
    const t = now();
    const last = lastTouch.get(keyId);
    if (last !== undefined && t - last < touchIntervalMs) return;
    if (lastTouch.size >= TOUCH_CACHE_MAX) lastTouch.clear();
    lastTouch.set(keyId, t);
    known?.used(keyId, t);
    // The WHERE also covers other processes that touched the key a moment ago. A
    // remembered row is stamped above instead of forgotten: this runs once a minute per key.
    await db.query(
      `UPDATE api_keys SET last_used_at = $2
        WHERE key_id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
      [keyId, new Date(t), new Date(t - touchIntervalMs)],
      { unwatched: true },
    );
  }

  /** The app's keys that still exist (current and those in their reissue grace period). */
  async function listKeys(appId: string): Promise<KeyRecord[]> {
    const rows = await db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_APP} WHERE k.app_id = $1 AND k.deleted_at IS NULL ORDER BY k.created_at, k.key_id`,
      [appId],
    );
    return rows.map(toKeyRecord);
  }

  async function getKey(keyId: string): Promise<KeyRecord | null> {
    const rows = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_APP} WHERE k.key_id = $1`, [keyId]);
    return rows[0] ? toKeyRecord(rows[0]) : null;
  }

  return { issue, reissue, suspend, unsuspend, remove, removeByOwner, suspendedKinds, lookup, lookupCurrent, touch, listKeys, getKey };
}

export type KeyService = ReturnType<typeof createKeyService>;
