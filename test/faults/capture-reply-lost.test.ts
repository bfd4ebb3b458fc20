// The database goes away around the capture's COMMIT (one of the windows a Postgres
// restart under load can hit, too narrow to hit on purpose with a real restart): the
// charge may have been made while the gateway only saw the connection drop. Answering
// 503 then would charge a request that got no image. The gateway asks again (a capture
// is idempotent per request ID) and delivers the image whenever the charge stands; if
// the store stays down it answers 503 and nothing is charged.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { DbUnavailableError } from "../../src/db/postgres-db.ts";
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

  /** A gateway whose capture runs `script[i]` on its i-th call ("commit-then-lose", "lose", "ok"). */
  function variantWith(script: ("commit-then-lose" | "lose" | "ok")[]) {
    const billing = g.h.services.billing;
    const sleep = recordingSleep(g.clock);
    let n = 0;
    const v = g.variant({
      sleep: sleep.fn,
      services: {
        billing: {
          ...billing,
          capture: async (requestId: string, amountKrw: number) => {
            const step = script[Math.min(n++, script.length - 1)];
            if (step === "lose") throw lost();
            const r = await billing.capture(requestId, amountKrw);
            if (step === "commit-then-lose") throw lost();
            return r;
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

  test("the store stays down: 503 with Retry-After after three tries, nothing charged, hold released", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const { v, sleep, calls } = variantWith(["lose"]);
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.match(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
    await expectError(res, 503, "service_unavailable");
    assert.equal(calls(), 3);
    assert.deepEqual(sleep.waits, [500, 500]);
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.balanceKrw, s.captures, s.releasedHolds], [CREDIT, 0, 1]);
  });
});
