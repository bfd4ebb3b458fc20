// The remembered spending counters on their own (recent-spend.ts): the time limit, the
// KST day boundary, a read across a forget, and which forget reaches which pair.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRecentSpend, RECENT_SPEND_MEMORY_MS } from "../../src/billing/recent-spend.ts";
import { nextKstMidnight } from "../../src/billing/kst.ts";

const spend = (krw: number) => ({ orgDayKrw: krw, appDayKrw: krw, appMonthKrw: krw });
const T0 = Date.UTC(2026, 10, 25, 4, 0, 0); // 13:00 KST

test("counters are believed for RECENT_SPEND_MEMORY_MS after they were read, not before the read", () => {
  const r = createRecentSpend();
  r.remember("org_1", "app_1", spend(50), T0, r.reading());
  assert.equal(r.get("org_1", "app_1", T0 + RECENT_SPEND_MEMORY_MS - 1)?.orgDayKrw, 50);
  assert.equal(r.get("org_1", "app_1", T0 + RECENT_SPEND_MEMORY_MS), undefined);
  assert.equal(r.get("org_1", "app_1", T0 - 1), undefined);
  assert.equal(r.get("org_1", "app_2", T0), undefined);
});

test("counters read before a KST midnight are not used after it: the day's counters start at zero", () => {
  const r = createRecentSpend();
  const midnight = nextKstMidnight(T0);
  r.remember("org_1", "app_1", spend(50), midnight - 10, r.reading());
  assert.equal(r.get("org_1", "app_1", midnight - 1)?.orgDayKrw, 50);
  assert.equal(r.get("org_1", "app_1", midnight), undefined);
});

test("a read across a forget is not remembered: it may predate the money that moved", () => {
  const r = createRecentSpend();
  const reading = r.reading();
  r.forgetOrg("org_other");
  r.remember("org_1", "app_1", spend(50), T0, reading);
  assert.equal(r.get("org_1", "app_1", T0), undefined);
});

test("forgetOrg forgets every app of that org and no other org; forgetAll forgets all", () => {
  const r = createRecentSpend();
  r.remember("org_1", "app_1", spend(1), T0, r.reading());
  r.remember("org_1", "app_2", spend(2), T0, r.reading());
  r.remember("org_2", "app_3", spend(3), T0, r.reading());
  r.forgetOrg("org_1");
  assert.equal(r.get("org_1", "app_1", T0), undefined);
  assert.equal(r.get("org_1", "app_2", T0), undefined);
  assert.equal(r.get("org_2", "app_3", T0)?.orgDayKrw, 3);
  r.forgetAll();
  assert.equal(r.get("org_2", "app_3", T0), undefined);
});

test("a reserve grows the kept counters it counts towards: the org's day for every app, the app's day and month for its own", () => {
  const r = createRecentSpend();
  r.remember("org_1", "app_1", spend(10), T0, r.reading());
  r.remember("org_1", "app_2", spend(20), T0, r.reading());
  r.remember("org_2", "app_3", spend(30), T0, r.reading());
  const reading = r.reading();
  r.reserving("org_1");
  r.reserveEnded("org_1", { appId: "app_1", amountKrw: 110, now: T0 + 5 });
  assert.deepEqual(r.get("org_1", "app_1", T0 + 5), { orgDayKrw: 120, appDayKrw: 120, appMonthKrw: 120 });
  assert.deepEqual(r.get("org_1", "app_2", T0 + 5), { orgDayKrw: 130, appDayKrw: 20, appMonthKrw: 20 });
  assert.deepEqual(r.get("org_2", "app_3", T0 + 5), spend(30));
  // Believed no longer than the read they started from.
  assert.equal(r.get("org_1", "app_1", T0 + RECENT_SPEND_MEMORY_MS), undefined);
  // A read that was in flight may or may not include the hold: not kept.
  r.remember("org_3", "app_4", spend(1), T0, reading);
  assert.equal(r.get("org_3", "app_4", T0), undefined);
});

test("while a reserve of the org runs, nothing about the org is kept: counters read or reported then may already hold its hold", () => {
  const r = createRecentSpend();
  r.reserving("org_1");
  r.reserving("org_1");
  // A capture's counters, reported while the reserves run (a fresh reading, as the capture port takes it).
  r.remember("org_1", "app_1", spend(110), T0, r.reading());
  assert.equal(r.get("org_1", "app_1", T0), undefined);
  r.remember("org_2", "app_2", spend(5), T0, r.reading());
  assert.deepEqual(r.get("org_2", "app_2", T0), spend(5), "another org is not held up");
  r.reserveEnded("org_1", "none");
  r.remember("org_1", "app_1", spend(110), T0, r.reading());
  assert.equal(r.get("org_1", "app_1", T0), undefined, "one of the two still runs");
  r.reserveEnded("org_1", { appId: "app_1", amountKrw: 22, now: T0 });
  r.remember("org_1", "app_1", spend(132), T0, r.reading());
  assert.deepEqual(r.get("org_1", "app_1", T0), spend(132));
  // A reserve that failed may have reserved: the org is forgotten.
  r.reserving("org_1");
  r.reserveEnded("org_1", "unknown");
  assert.equal(r.get("org_1", "app_1", T0), undefined);
});

test("a reserve after a KST midnight drops counters read before it instead of growing them", () => {
  const r = createRecentSpend();
  const midnight = nextKstMidnight(T0);
  r.remember("org_1", "app_1", spend(50), midnight - 10, r.reading());
  r.reserving("org_1");
  r.reserveEnded("org_1", { appId: "app_1", amountKrw: 110, now: midnight });
  assert.equal(r.get("org_1", "app_1", midnight - 5), undefined);
});
