// Top-ups through the payment-provider interface, with the sandbox: amounts, one credit
// per top-up however often it is confirmed, a declined payment credits nothing, and no
// top-up while a refund is processed. (A real provider: test/payments/stripe-flow.test.ts.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSandboxProvider, createTopups } from "../../src/payments/index.ts";
import { makeHarness } from "../support/harness.ts";

async function setup(decline?: (amount: number) => boolean) {
  const h = await makeHarness();
  const org = await h.admin("POST", "/orgs", { email: `t${crypto.randomUUID()}@example.com` });
  const orgId = org.json.orgId as string;
  const topups = createTopups({
    db: h.services.db,
    now: h.services.now,
    billing: h.services.billing,
    provider: createSandboxProvider({ decline }),
    refundPending: async (id) => (await h.services.accounts.getOrg(id))?.refundPending ?? false,
    log: () => {},
  });
  return { h, orgId, topups };
}

const URLS = { returnUrl: (id: string) => `http://localhost:8080/console/credit/top-ups/${id}`, cancelUrl: () => "http://localhost:8080/console/credit" };

test("only the offered amounts; confirming twice credits once", async () => {
  const { h, orgId, topups } = await setup();
  try {
    for (const bad of [0, 9_999, 20_000, 100_001, -10_000, 1.5]) {
      const r = await topups.start(orgId, bad, URLS);
      assert.equal(r.ok, false, String(bad));
    }
    const t = await topups.start(orgId, 100_000, URLS);
    assert.ok(t.ok);
    const [first, second] = await Promise.all([topups.confirmSandbox(orgId, t.topupId), topups.confirmSandbox(orgId, t.topupId)]);
    // One of two simultaneous confirms credits; the other finds it done or in progress.
    assert.equal([first, second].filter((r) => r.ok && !r.already).length, 1);
    const third = await topups.confirmSandbox(orgId, t.topupId);
    assert.ok(third.ok && third.already);
    assert.equal((await h.services.billing.balances(orgId))!.balanceKrw, 100_000);
    assert.equal((await topups.get(orgId, t.topupId))!.state, "confirmed");
    assert.equal((await topups.confirmSandbox("org_other", t.topupId)).ok, false, "another org cannot confirm it");
  } finally {
    await h.close();
  }
});

test("a declined payment credits nothing and cannot be confirmed later", async () => {
  const { h, orgId, topups } = await setup((amount) => amount === 50_000);
  try {
    const t = await topups.start(orgId, 50_000, URLS);
    assert.ok(t.ok);
    const r = await topups.confirmSandbox(orgId, t.topupId);
    assert.equal(r.ok, false);
    assert.equal((await topups.get(orgId, t.topupId))!.state, "failed");
    assert.equal((await topups.confirmSandbox(orgId, t.topupId)).ok, false);
    assert.equal((await h.services.billing.balances(orgId))!.balanceKrw, 0);
  } finally {
    await h.close();
  }
});

test("no top-up while a refund is processed", async () => {
  const { h, orgId, topups } = await setup();
  try {
    const t = await topups.start(orgId, 10_000, URLS);
    assert.ok(t.ok);
    await h.services.accounts.updateOrg(orgId, { refundPending: true });
    const r1 = await topups.start(orgId, 10_000, URLS);
    assert.equal(!r1.ok && r1.code, "refund_pending");
    const r2 = await topups.confirmSandbox(orgId, t.topupId);
    assert.equal(!r2.ok && r2.code, "refund_pending");
    assert.equal((await h.services.billing.balances(orgId))!.balanceKrw, 0);
  } finally {
    await h.close();
  }
});
