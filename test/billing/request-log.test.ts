import { test } from "node:test";
import assert from "node:assert/strict";
import { describeEachDb, manualClock } from "../db/harness.ts";
import { makeOrg, reqId } from "../db/fixtures.ts";
import { createRequestLog, type RequestLogRow } from "../../src/billing/index.ts";

const T0 = Date.parse("2026-11-17T14:00:00Z"); // 23:00 KST on the 17th
const HOUR = 3_600_000;

describeEachDb("request log", (getDb) => {
  const setup = async () => {
    const clock = manualClock(T0);
    const db = getDb();
    const log = createRequestLog({ db, now: clock.now });
    const f = await makeOrg(db, clock.now);
    const row = (over: Partial<RequestLogRow>): RequestLogRow => ({
      requestId: reqId(),
      receivedAt: clock.now(),
      orgId: f.orgId,
      appId: f.appId,
      keyId: "key_x",
      keyKind: "live",
      tier: "full",
      status: 200,
      chargedKrw: 110,
      attempts: 1,
      ...over,
    });
    return { clock, log, row, ...f };
  };

  test("the last write of a request wins, except its arrival time", async () => {
    const { log, row } = await setup();
    const first = row({ status: 202, chargedKrw: 0 });
    await log.logRequest(first);
    await log.logRequest({ ...first, receivedAt: first.receivedAt + 5000, status: 200, chargedKrw: 110, processingMs: 1234, attempts: 2, width: 640, height: 480 });
    const got = await log.getRequest(first.requestId);
    assert.ok(got);
    assert.equal(got.receivedAt, first.receivedAt);
    assert.equal(got.status, 200);
    assert.equal(got.chargedKrw, 110);
    assert.equal(got.processingMs, 1234);
    assert.equal(got.attempts, 2);
    assert.deepEqual([got.width, got.height], [640, 480]);
    assert.equal(await log.getRequest("req_missing"), null);
  });

  test("a row without key or org (an invalid key) can be logged", async () => {
    const { log } = await setup();
    const requestId = reqId();
    await log.logRequest({ requestId, receivedAt: T0, status: 401, errorCode: "invalid_api_key", chargedKrw: 0, attempts: 0, ip: "203.0.113.9" });
    const got = await log.getRequest(requestId);
    assert.equal(got?.orgId, null);
    assert.equal(got?.ip, "203.0.113.9");
  });

  test("listing filters by time, app and text, newest first", async () => {
    const { log, row, clock, orgId } = await setup();
    const rows: RequestLogRow[] = [];
    for (let i = 0; i < 6; i++) {
      const r = row(i === 4 ? { status: 429, errorCode: "daily_limit_reached", chargedKrw: 0 } : {});
      rows.push(r);
      await log.logRequest(r);
      clock.advance(HOUR);
    }
    const all = await log.listRequests({ orgId, limit: 100 });
    assert.deepEqual(all.map((r) => r.requestId), rows.map((r) => r.requestId).reverse());
    const window = await log.listRequests({ orgId, from: T0 + HOUR, to: T0 + 3 * HOUR, limit: 100 });
    assert.deepEqual(window.map((r) => r.requestId), [rows[2].requestId, rows[1].requestId]);
    assert.equal((await log.listRequests({ orgId, limit: 2 })).length, 2);
    const byCode = await log.listRequests({ orgId, query: "daily_limit_reached", limit: 10 });
    assert.deepEqual(byCode.map((r) => r.requestId), [rows[4].requestId]);
    const byId = await log.listRequests({ orgId, query: rows[3].requestId.slice(0, -3), limit: 10 });
    assert.deepEqual(byId.map((r) => r.requestId), [rows[3].requestId]);
    assert.deepEqual(await log.listRequests({ orgId, query: "%", limit: 10 }), []);
    assert.deepEqual(await log.listRequests({ orgId, appId: "app_other", limit: 10 }), []);
    assert.deepEqual(await log.listRequests({ orgId: "org_other", limit: 10 }), []);
  });

  test("usage by KST day includes empty days", async () => {
    const { log, row, clock, orgId } = await setup();
    await log.logRequest(row({})); // 17th 23:00 KST
    clock.advance(2 * HOUR); // 18th 01:00 KST
    await log.logRequest(row({}));
    await log.logRequest(row({ status: 402, errorCode: "insufficient_credits", chargedKrw: 0 }));
    clock.advance(2 * 24 * HOUR); // 20th
    const usage = await log.usageByDay({ orgId, days: 4 });
    assert.deepEqual(usage, [
      { day: "2026-11-17", calls: 1, errors: 0, chargedKrw: 110 },
      { day: "2026-11-18", calls: 2, errors: 1, chargedKrw: 110 },
      { day: "2026-11-19", calls: 0, errors: 0, chargedKrw: 0 },
      { day: "2026-11-20", calls: 0, errors: 0, chargedKrw: 0 },
    ]);
  });
});
