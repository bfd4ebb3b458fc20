// The product answering garbage or nothing, seen from a real gateway process (split
// deployment: PRODUCT_URL points at test/support/fake-product.ts). Garbage of every
// shape ends 502 upstream_error, never resent (it is a failure after processing
// began), nothing charged; a product that accepts and never answers ends 504
// upstream_timeout at the gateway's deadline (DEADLINE_MS, made small here), nothing
// charged. After each, the hold is released, the permits are back and a good answer
// is served and charged once.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openDb, type Db } from "../../src/db/index.ts";
import { createRedisLimiter, type Limiter } from "../../src/limits/index.ts";
import { startFakeProduct, type FakeMode, type FakeProduct } from "../support/fake-product.ts";
import { faultReport } from "../support/fault-report.ts";
import { fixture } from "../support/harness.ts";
import { privateStoresSkip, startPrivateStores, type PrivateStores } from "../support/private-stores.ts";
import { adminClient, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import { LONG, PRICE, assertNewCallsFlow, callOnce, checkAfterFault, type Call, type Customer } from "./load.ts";

const skip = privateStoresSkip();
const DEADLINE_MS = 3000;
const CALLS = LONG ? 20 : 3;
const PNG = fixture("images/orient-upright.png"); // 64×48

describe("faults: the product answers garbage or hangs", { skip, timeout: LONG ? 600_000 : 180_000 }, () => {
  const report = faultReport(`product garbage and hangs (${LONG ? "long" : "short"} version)`);
  let stores: PrivateStores | undefined;
  let fake: FakeProduct | undefined;
  let gateway: ServerProcess;
  let db: Db | undefined;
  let limiter: Limiter | undefined;

  before(async () => {
    [stores, fake] = await Promise.all([startPrivateStores(), startFakeProduct(PNG, 64, 48)]);
    gateway = await startServer({
      DATABASE_URL: stores.databaseUrl,
      REDIS_URL: stores.redisUrl,
      PRODUCT_URL: fake.url,
      // The 140 s deadline is a setting: small here so a hang ends within the test.
      DEADLINE_MS: String(DEADLINE_MS),
      // Resends allowed at any time left and without a wait, so the count of product
      // requests below shows the answer kind decided "not resent", not the clock.
      RESEND_MIN_REMAINING_MS: "0",
      RESEND_DEFAULT_WAIT_S: "0",
      HOLD_SWEEP_INTERVAL_MS: "200",
      PERMIT_LEASE_MS: "1000",
    });
    db = await openDb({ databaseUrl: stores.databaseUrl, dataDir: "", max: 2 });
    limiter = createRedisLimiter({ url: stores.redisUrl });
  });
  after(async () => {
    report.print();
    await stopAll();
    await fake?.close();
    await limiter?.close();
    await db?.close();
    await stores?.destroy();
  });

  async function scenario(mode: FakeMode, want: [number, string], fields: "preview" | "full" = "preview") {
    const c: Customer = await setUpCustomer(adminClient(gateway.url), { creditKrw: 10_000 });
    fake!.mode = mode;
    const before = fake!.requests;
    const calls: Call[] = [];
    // Two at a time (the org cap), as a client with a little concurrency would send them.
    for (let i = 0; i < CALLS; i += 2) {
      const batch = Math.min(2, CALLS - i);
      calls.push(...(await Promise.all(Array.from({ length: batch }, () => callOnce(gateway.url, c.liveKey, 30_000, fields)))));
    }
    for (const call of calls) {
      assert.deepEqual([call.status, call.code], want, `${mode}: ${JSON.stringify(call)}`);
      assert.equal(call.chargedKrw, undefined, `${mode}: nothing charged`);
    }
    assert.equal(fake!.requests - before, CALLS, `${mode}: a failure after processing began is not resent`);
    if (mode === "hang") {
      for (const call of calls) {
        const took = call.endedAt - call.startedAt;
        assert.ok(took >= DEADLINE_MS - 200 && took < DEADLINE_MS + 5000, `hang ends at the deadline (${took} ms)`);
      }
    }
    const row = await checkAfterFault({ db: db!, limiter: limiter!, customers: [c], calls, sweep: "sweep-now" });
    assert.equal(row.holdsOpenAfter, 0, "every hold was released by the request itself");
    // The product answers properly again: served and charged once.
    fake!.mode = "good";
    const t0 = Date.now();
    await assertNewCallsFlow(gateway.url, db!, [c]);
    report.add({ scenario: `product: ${mode}`, ...row, recoveredS: (Date.now() - t0) / 1000, pass: true });
  }

  test("200 with the wrong content type: 502 upstream_error, nothing charged", () => scenario("wrong-content-type", [502, "upstream_error"]));
  test("200 PNG whose body breaks off: 502 upstream_error, nothing charged", () => scenario("truncated-png", [502, "upstream_error"]));
  test("200 PNG complete by length but cut before IEND: 502, not delivered, nothing charged", () =>
    scenario("short-png", [502, "upstream_error"]));
  test("200 PNG whose X-Width/X-Height claim more pixels than it has: 502, not charged at the full price", () =>
    scenario("lying-dimensions", [502, "upstream_error"], "full"));
  test("500 with a body that is not JSON: 502 upstream_error, nothing charged", () => scenario("invalid-json-error", [502, "upstream_error"]));
  test("connection reset mid-body: 502 upstream_error, nothing charged", () => scenario("reset-mid-body", [502, "upstream_error"]));
  test("accepts and never answers: 504 upstream_timeout at DEADLINE_MS, nothing charged", () => scenario("hang", [504, "upstream_timeout"]));

  test("the control: a good answer is served and charged once", async () => {
    const c: Customer = await setUpCustomer(adminClient(gateway.url), { creditKrw: 10_000 });
    fake!.mode = "good";
    const call = await callOnce(gateway.url, c.liveKey);
    assert.deepEqual([call.status, call.chargedKrw, call.bodyOk], [200, PRICE, true]);
  });
});
