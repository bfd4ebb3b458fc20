// The embedded deployment (PGlite in DATA_DIR, in-process limiter): a gateway killed
// (SIGKILL) after it reserved a hold, while the product runs, takes no money. The hold
// is in the data directory after the crash, still open (it may not be given back while
// the request could still be running); the sweeper releases it once it has expired;
// the balance never moved. The Postgres + Redis version, where the surviving process's
// sweeper does it, is in gateway-processes.test.ts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createBilling } from "../../src/billing/index.ts";
import { openDb } from "../../src/db/index.ts";
import { fixture } from "../support/harness.ts";
import { assertSettled, ledgerSummary } from "../support/money-checks.ts";
import { sendRemovebg } from "../support/removebg-request.ts";
import { adminClient, over, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import { EMBEDDED, openStack, type OpenedStack } from "../support/stacks.ts";
import { poll } from "../support/poll.ts";

const FULL_IMAGE = fixture("photos/astronaut.png"); // 512×512: a full-tier output, 110 KRW
const FULL = 110;
const CREDIT = 1000;
// Long enough to kill the process while the product runs; the pool's warm-up run takes it too.
const STUB_DELAY_MS = "2000";

/** Starts the paid call and returns its promise, which must end in a connection error. */
function fireFullCall(server: ServerProcess, key: string): Promise<unknown> {
  const p = sendRemovebg(over(server.url), key, { image_file: FULL_IMAGE }).then(
    (res) => ({ answered: res.status }),
    (err: unknown) => ({ connectionError: err instanceof Error ? err.message : String(err) }),
  );
  return p;
}

describe("gateway killed after reserve [embedded]", { skip: EMBEDDED.skip, timeout: 120_000 }, () => {
  let opened: OpenedStack | undefined;

  before(async () => {
    opened = await openStack(EMBEDDED, 0, { dataDir: true });
  });
  after(async () => {
    await stopAll();
    await opened?.close();
  });

  test("the hold survives the crash in the data directory and the sweeper releases it once expired", async () => {
    const env = { ...opened!.env, STUB_DELAY_MS };
    const first = await startServer(env);
    const admin = adminClient(first.url);
    const c = await setUpCustomer(admin, { creditKrw: CREDIT });
    const call = fireFullCall(first, c.liveKey);
    // Only the server may open its PGlite directory while it runs: watch through the operator API.
    await poll("the hold", () => admin("GET", `/orgs/${c.orgId}`), (r) => r.json.availableKrw === CREDIT - FULL);
    await first.kill("SIGKILL");
    assert.ok("connectionError" in ((await call) as object));

    // The dead server's directory, opened the way the service opens it.
    const db = await openDb({ dataDir: opened!.pgliteDir! });
    try {
      const crashed = await ledgerSummary(db, c.orgId);
      assert.deepEqual(
        { balance: crashed.balanceKrw, held: crashed.heldKrw, open: crashed.openHolds, captures: crashed.captures },
        { balance: CREDIT, held: FULL, open: 1, captures: 0 },
      );
      const [hold] = await db.query<{ expires_at: number }>("SELECT expires_at FROM holds WHERE org_id = $1", [c.orgId]);
      // The sweeper with a clock just before and just after the hold's expiry.
      assert.equal(await createBilling({ db, now: () => hold.expires_at - 1, holdTtlMs: 1 }).sweepExpired(), 0);
      assert.equal(await createBilling({ db, now: () => hold.expires_at, holdTtlMs: 1 }).sweepExpired(), 1);
      const s = await assertSettled(db, c.orgId);
      assert.deepEqual({ balance: s.balanceKrw, captures: s.captures, released: s.releasedHolds }, { balance: CREDIT, captures: 0, released: 1 });
    } finally {
      await db.close();
    }

    // (The in-process permits died with the process; test/money/product-failures and
    // kst-boundaries check that no path leaks one in a live in-process limiter.)
  });
});
