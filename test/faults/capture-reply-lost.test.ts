// The database goes away around the capture's COMMIT (one of the windows a Postgres
// restart under load can hit, too narrow to hit on purpose with a real restart): the
// charge may have been made while the gateway only saw the connection drop. Answering
// 503 then would charge a request that got no image. The gateway asks again (a capture
// is idempotent per request ID) for as long as the request's deadline allows, with the
// test clock standing in for the waits. If the deadline comes first, the image is
// delivered anyway and the hold goes to the reconciler, which captures it when the
// store is back (src/gateway/capture.ts): never an error for a call that may be charged.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { DbUnavailableError } from "../../src/db/postgres-db.ts";
import { CHARGED_ROW_WAITS_MS } from "../../src/gateway/log-write.ts";
import { assertLogMatchesLedger, assertSettled } from "../support/money-checks.ts";
import { capturesOf, expectError, gatewayHarness, recordingSleep, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";

const PRICE = 22;
const CREDIT = 1000;
const lost = () => new DbUnavailableError("database unavailable: Connection terminated unexpectedly");

describe("faults: the capture's reply is lost", { timeout: 120_000 }, () => {
  let g: GatewayHarness;
  before(async () => {
    g = await gatewayHarness();
  });
  after(() => g.close());

  /**
   * A gateway whose capture runs `script[i]` on its i-th call ("commit-then-lose", "lose",
   * "ok"); with `downUntil`, every call before that test-clock time is lost too.
   */
  function variantWith(script: ("commit-then-lose" | "lose" | "ok")[], downUntil = 0, log: { lose: number } = { lose: 0 }) {
    const billing = g.h.services.billing;
    const requestLog = g.h.services.requestLog;
    const sleep = recordingSleep(g.clock);
    let n = 0;
    const v = g.variant({
      sleep: sleep.fn,
      services: {
        billing: {
          ...billing,
          capture: async (requestId: string, amountKrw: number) => {
            const step = script[Math.min(n++, script.length - 1)];
            if (step === "lose" || (step === "ok" && g.clock.now() < downUntil)) throw lost();
            const r = await billing.capture(requestId, amountKrw);
            if (step === "commit-then-lose") throw lost();
            return r;
          },
        },
        // The request log is on the same store: its next `log.lose` writes are lost.
        requestLog: {
          ...requestLog,
          logRequest: async (row) => {
            if (log.lose > 0 && log.lose--) throw lost();
            return requestLog.logRequest(row);
          },
        },
      },
    });
    return { v, sleep, calls: () => n };
  }

  test("the charge was made but its reply lost: asked again, the image is delivered, charged once", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const { v, sleep, calls } = variantWith(["commit-then-lose", "ok"]);
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.arrayBuffer()).byteLength > 8, "the image is delivered");
    assert.equal(res.headers.get("x-pd-charged-krw"), String(PRICE));
    assert.equal(res.headers.get("x-pd-balance-krw"), String(CREDIT - PRICE));
    assert.equal(calls(), 2);
    assert.deepEqual(sleep.waits, [500]);
    const requestId = res.headers.get("x-pd-request-id")!;
    assert.deepEqual(await capturesOf(g.h, requestId), [PRICE], "one capture");
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.equal(s.balanceKrw, CREDIT - PRICE);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("the store is back on the second try before anything was charged: charged once, delivered", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const { v, calls } = variantWith(["lose", "ok"]);
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.equal(calls(), 2);
    assert.equal((await assertSettled(g.h.services.db, c.orgId)).captures, 1);
  });

  test("the charge was made, then the store stays away 20 s: asked until it answers, delivered, charged once", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const { v, sleep, calls } = variantWith(["commit-then-lose", "ok"], g.clock.now() + 20_000);
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    assert.equal(res.headers.get("x-pd-charged-krw"), String(PRICE));
    assert.equal(res.headers.get("x-pd-balance-krw"), String(CREDIT - PRICE), "the outcome is known: the first capture's numbers");
    assert.deepEqual(sleep.waits.slice(0, 4), [500, 1000, 2000, 2000], "growing waits, capped");
    const waited = sleep.waits.reduce((a, b) => a + b, 0);
    assert.ok(waited >= 20_000 && waited < 23_000, `asked until the store was back (${waited} ms)`);
    assert.ok(calls() > 10);
    assert.deepEqual(await capturesOf(g.h, res.headers.get("x-pd-request-id")!), [PRICE], "one capture");
    assert.equal(g.h.services.reconciler.pending(), 0, "nothing left to reconcile");
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("the log write of a charged call is lost right after the capture: asked again, the row is stored", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const { v, sleep } = variantWith(["ok"], 0, { lose: 2 });
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.deepEqual(sleep.waits, [250, 500]);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("the charged call's log row cannot be written at all: the reconciler writes it once the store is back, charged once", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const log = { lose: 100 };
    const { v } = variantWith(["ok"], 0, log);
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.equal(g.h.services.reconciler.pending(), 1, "the row waits for the store");
    log.lose = 0;
    assert.equal(await g.h.services.reconciler.runOnce(), 0);
    assert.deepEqual(await capturesOf(g.h, res.headers.get("x-pd-request-id")!), [PRICE], "asking again charged nothing more");
    await assertSettled(g.h.services.db, c.orgId);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("the store stays away past the deadline: the image is delivered, the reconciler captures once it is back", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    // Every log write while the store is away is lost too; the reconciler writes the row again.
    const log = { lose: 100 };
    const { v, sleep } = variantWith(["lose"], 0, log);
    const deadlineMs = g.h.services.config.DEADLINE_MS;
    const started = g.clock.now();
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.arrayBuffer()).byteLength > 8, "the image is delivered");
    assert.equal(res.headers.get("x-pd-charged-krw"), String(PRICE), "what the reconciler will charge");
    assert.equal(res.headers.get("x-pd-balance-krw"), null, "the balance after it is not known yet");
    // The capture's waits, then the charged log row's (lost while the store is away).
    const logWaits = sleep.waits.slice(-CHARGED_ROW_WAITS_MS.length);
    assert.deepEqual(logWaits, [...CHARGED_ROW_WAITS_MS]);
    const captureWaited = sleep.waits.slice(0, -CHARGED_ROW_WAITS_MS.length).reduce((a, b) => a + b, 0);
    assert.ok(captureWaited < deadlineMs && g.clock.now() - started >= captureWaited, "no capture wait ran past the deadline");
    assert.ok(sleep.waits.length > 10);
    const requestId = res.headers.get("x-pd-request-id")!;
    assert.deepEqual(await capturesOf(g.h, requestId), [], "not captured yet");
    assert.equal(g.h.services.reconciler.pending(), 1);
    // The store is back (the reconciler uses the real capture): one round settles it.
    log.lose = 0;
    assert.equal(await g.h.services.reconciler.runOnce(), 0);
    assert.deepEqual(await capturesOf(g.h, requestId), [PRICE], "captured once");
    assert.equal(await g.h.services.reconciler.runOnce(), 0);
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.balanceKrw, s.captures, s.releasedHolds], [CREDIT - PRICE, 1, 0]);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });
});
