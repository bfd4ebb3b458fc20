import { test } from "node:test";
import assert from "node:assert/strict";
import { allSettled, describeEachDb, manualClock } from "../db/harness.ts";
import { makeOrg } from "../db/fixtures.ts";
import { LOOKUP_BY_HASH_SQL } from "../../src/keys/records.ts";
import { UNKNOWN_KEY_MEMORY_MS } from "../../src/keys/unknown-hashes.ts";
import { createKeyService, generateKey, loadOrCreatePepper, REISSUE_GRACE_MS, DORMANT_AFTER_MS } from "../../src/keys/index.ts";
import { createAccounts } from "../../src/accounts/index.ts";
import { setLowBalanceThreshold } from "../../src/billing/low-balance.ts";
import type { Db } from "../../src/db/index.ts";

const START = Date.parse("2026-11-17T03:00:00Z");
const DAY = 86_400_000;
const PEPPER = "test-pepper-0123456789";

/** Every row of every table of ours, as text, for searching. */
async function dumpAllRows(db: Db): Promise<string> {
  const tables = await db.query<{ tablename: string }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  );
  assert.ok(tables.length >= 10);
  let text = "";
  for (const { tablename } of tables) {
    const rows = await db.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${tablename}" t`);
    for (const r of rows) text += r.j + "\n";
  }
  return text;
}

describeEachDb("keys", (getDb) => {
  const setup = async (opts: { verified?: boolean } = {}) => {
    const clock = manualClock(START);
    const db = getDb();
    const keys = createKeyService({ db, now: clock.now, pepper: PEPPER });
    const accounts = createAccounts({ db, now: clock.now });
    const f = await makeOrg(db, clock.now, { verified: opts.verified ?? true });
    return { db, clock, keys, accounts, ...f };
  };
  const reasonOf = (r: Awaited<ReturnType<ReturnType<typeof createKeyService>["lookup"]>>) =>
    r.ok ? "ok" : `${r.code}/${r.reason}`;

  test("an issued key looks up to its key, app and org", async () => {
    const { keys, appId, orgId, userId } = await setup();
    const issued = await keys.issue(appId, "live");
    assert.ok(issued.ok);
    assert.match(issued.keyId, /^key_/);
    assert.match(issued.key, /^pd_live_/);
    const found = await keys.lookup(issued.key);
    assert.ok(found.ok);
    assert.equal(found.key.keyId, issued.keyId);
    assert.equal(found.key.kind, "live");
    assert.equal(found.key.label, `${issued.key.slice(0, 12)}…${issued.key.slice(-4)}`);
    assert.deepEqual(found.app, { appId, orgId, name: "fixture app", productEnabled: true, dailyLimitKrw: null, monthlyLimitKrw: null });
    assert.deepEqual(found.org, { orgId, ownerUserId: userId, dailyLimitKrw: 50_000, refundPending: false, testQuota: "monthly", lowBalanceWatched: false });
  });

  test("the lookup says whether a low-balance e-mail is still to be sent (the capture's claim query runs only then)", async () => {
    const { keys, appId, orgId, db } = await setup();
    const issued = await keys.issue(appId, "live");
    assert.ok(issued.ok);
    const watched = async () => {
      const found = await keys.lookup(issued.key);
      assert.ok(found.ok);
      return found.org.lowBalanceWatched;
    };
    assert.equal(await watched(), false, "no threshold");
    await setLowBalanceThreshold(db, orgId, 10_000);
    assert.equal(await watched(), true, "a threshold, no e-mail yet");
    await db.query("UPDATE organizations SET low_balance_notified = true WHERE org_id = $1", [orgId]);
    assert.equal(await watched(), false, "the e-mail went out");
  });

  test("a key with no row is remembered as unknown for a minute: one query, not one per call", async () => {
    const { db, clock, appId } = await setup();
    let lookups = 0;
    const counting: Db = {
      ...db,
      query: (text, params) => {
        if (text === LOOKUP_BY_HASH_SQL) lookups++;
        return db.query(text, params);
      },
    };
    const keys = createKeyService({ db: counting, now: clock.now, pepper: PEPPER });
    const madeUp = generateKey("live");
    for (let i = 0; i < 5; i++) assert.equal(reasonOf(await keys.lookup(madeUp)), "invalid_api_key/unknown");
    assert.equal(lookups, 1, "asked the store once");
    clock.advance(UNKNOWN_KEY_MEMORY_MS);
    assert.equal(reasonOf(await keys.lookup(madeUp)), "invalid_api_key/unknown");
    assert.equal(lookups, 2, "asked again once the minute is over");
    // A key that exists is never answered from that memory, and a deleted one has a row: judged every call.
    const issued = await keys.issue(appId, "live");
    assert.ok(issued.ok);
    assert.equal(reasonOf(await keys.lookup(issued.key)), "ok");
    assert.ok(await keys.remove(issued.keyId).then((r) => r.ok));
    assert.equal(reasonOf(await keys.lookup(issued.key)), "invalid_api_key/deleted");
    assert.equal(lookups, 4);
  });

  test("lookupCurrent finds an app's current key of a kind by app ID, judged like a presented key", async () => {
    const { keys, appId, clock } = await setup();
    assert.equal(reasonOf(await keys.lookupCurrent(appId, "test")), "invalid_api_key/unknown", "none issued");
    const first = await keys.issue(appId, "test");
    assert.ok(first.ok);
    const live = await keys.issue(appId, "live");
    assert.ok(live.ok);
    const found = await keys.lookupCurrent(appId, "test");
    assert.ok(found.ok);
    assert.equal(found.key.keyId, first.keyId, "the test key, not the live one");
    const again = await keys.reissue(first.keyId);
    assert.ok(again.ok);
    const current = await keys.lookupCurrent(appId, "test");
    assert.ok(current.ok);
    assert.equal(current.key.keyId, again.keyId, "after a reissue: the new key");
    await keys.suspend(again.keyId);
    assert.equal(reasonOf(await keys.lookupCurrent(appId, "test")), "key_suspended/suspended");
    await keys.unsuspend(again.keyId);
    clock.advance(DORMANT_AFTER_MS + DAY);
    assert.equal(reasonOf(await keys.lookupCurrent(appId, "test")), "invalid_api_key/dormant");
    await keys.remove(again.keyId);
    assert.equal(reasonOf(await keys.lookupCurrent(appId, "test")), "invalid_api_key/unknown", "deleted: no current key");
  });

  test("missing, malformed and unknown keys are invalid_api_key with their reason", async () => {
    const { keys } = await setup();
    assert.equal(reasonOf(await keys.lookup(undefined)), "invalid_api_key/missing");
    assert.equal(reasonOf(await keys.lookup("")), "invalid_api_key/missing");
    assert.equal(reasonOf(await keys.lookup("pd_live_short")), "invalid_api_key/malformed");
    assert.equal(reasonOf(await keys.lookup(generateKey("live"))), "invalid_api_key/unknown");
  });

  test("a key hashed under another pepper is unknown", async () => {
    const { keys, appId, db, clock } = await setup();
    const issued = await keys.issue(appId, "test");
    assert.ok(issued.ok);
    const other = createKeyService({ db, now: clock.now, pepper: "a-different-pepper-value" });
    assert.equal(reasonOf(await other.lookup(issued.key)), "invalid_api_key/unknown");
  });

  test("a live key needs a verified owner; a test key does not", async () => {
    const { keys, accounts, appId, userId } = await setup({ verified: false });
    assert.ok((await keys.issue(appId, "test")).ok);
    const live = await keys.issue(appId, "live");
    assert.equal(live.ok ? "ok" : live.code, "conflict");
    await accounts.markEmailVerified(userId);
    assert.ok((await keys.issue(appId, "live")).ok);
  });

  test("one current key per kind: a second issue is refused until the first is deleted", async () => {
    const { keys, appId } = await setup();
    const first = await keys.issue(appId, "test");
    assert.ok(first.ok);
    const second = await keys.issue(appId, "test");
    assert.equal(second.ok ? "ok" : second.code, "conflict");
    assert.ok((await keys.issue(appId, "live")).ok); // the other kind is separate
    assert.deepEqual(await keys.remove(first.keyId), { ok: true });
    assert.deepEqual(await keys.remove(first.keyId), { ok: true });
    assert.equal(reasonOf(await keys.lookup(first.key)), "invalid_api_key/deleted");
    assert.ok((await keys.issue(appId, "test")).ok);
    const unknownApp = await keys.issue("app_nope", "test");
    assert.equal(unknownApp.ok ? "ok" : unknownApp.code, "not_found");
  });

  test("concurrent issues of one kind yield exactly one key", async () => {
    const { keys, appId } = await setup();
    const results = await allSettled(Array.from({ length: 8 }, () => keys.issue(appId, "live")));
    assert.equal(results.filter((r) => r.ok).length, 1);
  });

  test("reissue: both keys work for 7 days, then the old one is expired", async () => {
    const { keys, appId, clock } = await setup();
    const old = await keys.issue(appId, "live");
    assert.ok(old.ok);
    clock.advance(DAY);
    const fresh = await keys.reissue(old.keyId);
    assert.ok(fresh.ok);
    assert.notEqual(fresh.key, old.key);
    assert.equal(fresh.previousValidUntil, clock.now() + REISSUE_GRACE_MS);
    assert.equal(reasonOf(await keys.lookup(old.key)), "ok");
    assert.equal(reasonOf(await keys.lookup(fresh.key)), "ok");
    clock.set(fresh.previousValidUntil - 1);
    assert.equal(reasonOf(await keys.lookup(old.key)), "ok");
    clock.set(fresh.previousValidUntil);
    assert.equal(reasonOf(await keys.lookup(old.key)), "invalid_api_key/expired");
    assert.equal(reasonOf(await keys.lookup(fresh.key)), "ok");
    // The replaced key cannot be reissued again; its replacement can.
    const again = await keys.reissue(old.keyId);
    assert.equal(again.ok ? "ok" : again.code, "conflict");
    assert.ok((await keys.reissue(fresh.keyId)).ok);
    const listed = await keys.listKeys(appId);
    assert.equal(listed.length, 3);
  });

  test("suspension answers key_suspended until lifted; a suspended key is not reissued", async () => {
    const { keys, appId } = await setup();
    const k = await keys.issue(appId, "live");
    assert.ok(k.ok);
    assert.deepEqual(await keys.suspend(k.keyId), { ok: true });
    assert.deepEqual(await keys.suspend(k.keyId), { ok: true });
    assert.equal(reasonOf(await keys.lookup(k.key)), "key_suspended/suspended");
    const re = await keys.reissue(k.keyId);
    assert.equal(re.ok ? "ok" : re.code, "key_suspended");
    assert.deepEqual(await keys.unsuspend(k.keyId), { ok: true });
    assert.equal(reasonOf(await keys.lookup(k.key)), "ok");
    const missing = await keys.suspend("key_nope");
    assert.equal(missing.ok ? "ok" : missing.code, "not_found");
  });

  test("a key unused for 180 days is dormant; use keeps it alive", async () => {
    const { keys, appId, clock } = await setup();
    const idle = await keys.issue(appId, "test");
    const used = await keys.issue(appId, "live");
    assert.ok(idle.ok && used.ok);
    clock.advance(100 * DAY);
    await keys.touch(used.keyId);
    clock.set(START + DORMANT_AFTER_MS);
    assert.equal(reasonOf(await keys.lookup(idle.key)), "ok");
    clock.set(START + DORMANT_AFTER_MS + 1);
    assert.equal(reasonOf(await keys.lookup(idle.key)), "invalid_api_key/dormant");
    assert.equal(reasonOf(await keys.lookup(used.key)), "ok");
    clock.set(START + 100 * DAY + DORMANT_AFTER_MS + 1);
    assert.equal(reasonOf(await keys.lookup(used.key)), "invalid_api_key/dormant");
    // Reissuing is the way back.
    const back = await keys.reissue(idle.keyId);
    assert.ok(back.ok);
    assert.equal(reasonOf(await keys.lookup(back.key)), "ok");
  });

  test("deleting the app invalidates its keys", async () => {
    const { keys, accounts, appId } = await setup();
    const k = await keys.issue(appId, "test");
    assert.ok(k.ok);
    await accounts.removeApp(appId);
    assert.equal(reasonOf(await keys.lookup(k.key)), "invalid_api_key/deleted");
  });

  test("touch writes last_used_at at most once a minute", async () => {
    const { keys, appId, clock, db } = await setup();
    const k = await keys.issue(appId, "test");
    assert.ok(k.ok);
    const lastUsed = async () =>
      (await db.query<{ t: number | null }>("SELECT last_used_at AS t FROM api_keys WHERE key_id = $1", [k.keyId]))[0].t;
    assert.equal(await lastUsed(), null);
    await keys.touch(k.keyId);
    assert.equal(await lastUsed(), START);
    clock.advance(59_999);
    await keys.touch(k.keyId);
    // Another process (no shared memory) is held back by the database condition too.
    await createKeyService({ db, now: clock.now, pepper: PEPPER }).touch(k.keyId);
    assert.equal(await lastUsed(), START);
    clock.advance(1);
    await keys.touch(k.keyId);
    assert.equal(await lastUsed(), START + 60_000);
  });

  test("the pepper is generated once and kept; a configured one wins", async () => {
    const { db, clock, appId } = await setup();
    assert.equal(await loadOrCreatePepper(db, "configured-pepper-123"), "configured-pepper-123");
    const [a, b] = await allSettled([loadOrCreatePepper(db), loadOrCreatePepper(db)]);
    assert.equal(a, b);
    assert.ok(a.length >= 32);
    assert.equal(await loadOrCreatePepper(db), a);
    // Keys issued under the stored pepper still work for a service started later.
    const k = await createKeyService({ db, now: clock.now, pepper: a }).issue(appId, "test");
    assert.ok(k.ok);
    const later = createKeyService({ db, now: clock.now, pepper: await loadOrCreatePepper(db) });
    assert.ok((await later.lookup(k.key)).ok);
  });

  test("key text is stored nowhere", async () => {
    const { keys, appId, db } = await setup();
    const texts: string[] = [];
    for (const kind of ["test", "live"] as const) {
      const k = await keys.issue(appId, kind);
      assert.ok(k.ok);
      const r = await keys.reissue(k.keyId);
      assert.ok(r.ok);
      texts.push(k.key, r.key);
    }
    const dump = await dumpAllRows(db);
    assert.ok(dump.includes(appId), "the dump does contain this test's rows");
    for (const t of texts) {
      const secret = t.slice(8); // the 40 random characters
      assert.equal(dump.includes(secret), false, "key text found in the database");
      // Nor any long piece of it beyond the 4 + 4 shown characters.
      for (let i = 4; i + 12 <= secret.length - 4; i++) {
        assert.equal(dump.includes(secret.slice(i, i + 12)), false);
      }
    }
  });
});
