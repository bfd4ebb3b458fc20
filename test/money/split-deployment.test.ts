// The split deployment: a gateway process (PRODUCT_URL set, no engine) and a product
// process, over real sockets. The internal product endpoint bills nothing, so it only
// serves holders of the operator token. When the product process dies mid-run the
// gateway sees a connection error, which the spec makes resendable; with the product
// gone the resends fail too, and the request ends 502 upstream_error with its hold and
// permit released and nothing charged.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openDb, type Db } from "../../src/db/index.ts";
import { createRedisLimiter } from "../../src/limits/index.ts";
import { fixture } from "../support/harness.ts";
import { assertLogMatchesLedger, assertSettled, ledgerSummary, requestLogRows } from "../support/money-checks.ts";
import { heldPermits, orgLiveKey } from "../support/permits.ts";
import { outcomeOf, removebgInit, sendRemovebg } from "../support/removebg-request.ts";
import { adminClient, over, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import { openStack, REAL, type OpenedStack } from "../support/stacks.ts";
import { poll } from "../support/poll.ts";
import { freePort } from "../support/free-port.ts";

const FULL_IMAGE = fixture("photos/astronaut.png");
const PREVIEW_IMAGE = fixture("images/orient-upright.png");
const CREDIT = 1000;

/** A port nothing listens on right now, so both processes can start at once. */

describe("split deployment: gateway process + product process", { skip: REAL.skip, timeout: 120_000 }, () => {
  let opened: OpenedStack | undefined;
  let db: Db | undefined;
  let product: ServerProcess;
  let gateway: ServerProcess;

  before(async () => {
    opened = await openStack(REAL, 15);
    db = await openDb({ databaseUrl: opened.env.DATABASE_URL, dataDir: "", max: 2 });
    const port = await freePort();
    [product, gateway] = await Promise.all([
      startServer({ ...opened.env, PORT: String(port), STUB_DELAY_MS: "2000" }),
      // Resends wait 1 s instead of 10 when the product gives no Retry-After.
      startServer({ ...opened.env, PRODUCT_URL: `http://127.0.0.1:${port}`, RESEND_DEFAULT_WAIT_S: "1" }),
    ]);
  });
  after(async () => {
    await stopAll();
    await db?.close();
    await opened?.close();
  });

  test("the internal product endpoint refuses callers without the operator token", async () => {
    const init = await removebgInit(undefined, { image_file: PREVIEW_IMAGE, size: "preview" });
    const res = await fetch(`${product.url}/internal/v1/removebg`, init);
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { errors: { code: string }[] }).errors[0].code, "unauthorized");
  });

  test("a call through the gateway is processed by the product process and charged once", async () => {
    const c = await setUpCustomer(adminClient(gateway.url), { creditKrw: CREDIT });
    const o = await sendRemovebg(over(gateway.url), c.liveKey, { image_file: PREVIEW_IMAGE, size: "preview" }).then(outcomeOf);
    assert.deepEqual([o.status, o.chargedKrw, o.balanceKrw], [200, 22, CREDIT - 22]);
    // The product's log line reaches us through its stdout pipe, which may lag the answer.
    const logged = () => Promise.resolve(product.lines.some((l) => l.includes('"msg":"removed"') && l.includes(o.requestId)));
    assert.ok(await poll("the product's removed line", logged, (v) => v, 5_000).catch(() => false), "processed over there");
    await assertSettled(db!, c.orgId);
  });

  test("the product process dies mid-run: resent, then 502 upstream_error, nothing charged", async () => {
    const c = await setUpCustomer(adminClient(gateway.url), { creditKrw: CREDIT });
    const pending = sendRemovebg(over(gateway.url), c.liveKey, { image_file: FULL_IMAGE }).then(outcomeOf);
    for (let i = 0; (await ledgerSummary(db!, c.orgId)).openHolds === 0; i++) {
      if (i > 400) throw new Error("the hold never appeared");
      await new Promise((r) => setTimeout(r, 25));
    }
    // Let the upload reach the product and its job start before pulling the plug.
    await new Promise((r) => setTimeout(r, 300));
    await product.kill("SIGKILL");
    const o = await pending;
    assert.deepEqual([o.status, o.code, o.chargedKrw], [502, "upstream_error", undefined]);
    const [row] = (await requestLogRows(db!, c.orgId)).filter((r) => r.request_id === o.requestId);
    assert.deepEqual([row.status, row.attempts, row.charged_krw], [502, 3, 0], "first attempt + 2 resends");
    const s = await assertSettled(db!, c.orgId);
    assert.deepEqual([s.balanceKrw, s.captures, s.releasedHolds], [CREDIT, 0, 1]);
    await assertLogMatchesLedger(db!, c.orgId);

    // The gateway gave its permit back on this path too.
    const limiter = createRedisLimiter({ url: opened!.env.REDIS_URL });
    try {
      assert.equal(await heldPermits(limiter, orgLiveKey(c.orgId), 2), 0);
    } finally {
      await limiter.close();
    }
  });
});
