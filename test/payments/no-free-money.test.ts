// Money comes only from a real payment (docs/SECURITY.md "Money"): with no provider
// configured (the default) the console offers no top-up and a posted one credits
// nothing; the sandbox runs only where it is turned on, never in production; and a
// refund pays back only money paid in through a provider: neither sandbox top-ups nor
// operator credit ever leave as money.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "../../src/config.ts";
import { makeHarness } from "../support/harness.ts";
import { signedUp } from "../console/client.ts";

test("no provider configured (the default): top-up is unavailable, a posted top-up credits nothing", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { client, orgId } = await signedUp(h);
    const credit = await client.get("/console/credit");
    assert.match(credit.html, /Top-up is not available/);
    assert.doesNotMatch(credit.html, /action="\/console\/credit\/top-ups"/, "no top-up form");
    for (let i = 0; i < 3; i++) {
      const posted = await client.post("/console/credit/top-ups", { amountKrw: "100000" });
      assert.equal(posted.status, 503, "answered unavailable");
      assert.match(posted.html, /not available/);
    }
    assert.equal((await h.services.billing.balances(orgId))!.balanceKrw, 0);
    const rows = await h.services.db.query("SELECT 1 FROM topups WHERE org_id = $1", [orgId]);
    assert.equal(rows.length, 0, "no top-up recorded");
    // The operator can still grant credit.
    assert.equal((await h.admin("POST", `/orgs/${orgId}/credit`, { amountKrw: 5000 })).status, 200);
    assert.equal((await h.services.billing.balances(orgId))!.balanceKrw, 5000);
  } finally {
    await h.close();
  }
});

test("the sandbox is turned on only explicitly, and never under NODE_ENV=production (or with NODE_ENV unset)", () => {
  assert.equal(parseConfig({}).PAYMENT_PROVIDER, "none");
  assert.equal(parseConfig({ NODE_ENV: "development" }).PAYMENT_PROVIDER, "none");
  assert.equal(parseConfig({ NODE_ENV: "development", PAYMENT_PROVIDER: "sandbox" }).PAYMENT_PROVIDER, "sandbox");
  assert.throws(() => parseConfig({ NODE_ENV: "production", PAYMENT_PROVIDER: "sandbox" }), (e: unknown) => e instanceof ConfigError && /PAYMENT_PROVIDER/.test(e.message));
  assert.throws(() => parseConfig({ PAYMENT_PROVIDER: "sandbox" }), ConfigError);
});

test("sandbox top-ups are credit, never money: the refund pays back nothing of them", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true", NODE_ENV: "development", PAYMENT_PROVIDER: "sandbox" } });
  try {
    const { client, orgId } = await signedUp(h);
    for (let i = 0; i < 2; i++) {
      await client.get("/console/credit");
      const started = await client.post("/console/credit/top-ups", { amountKrw: "100000" });
      assert.equal(started.status, 303);
      const page = await client.get(started.location!);
      assert.match(page.html, /Sandbox: no money is taken/);
      await client.postFollow(`${started.location}/confirm`);
    }
    assert.equal((await h.services.billing.balances(orgId))!.balanceKrw, 200_000);
    await client.get("/console/credit");
    await client.postFollow("/console/credit/refund", { confirm: "yes" });
    const done = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.equal(done.status, 200, JSON.stringify(done.json));
    assert.equal(done.json.refundedKrw, 0, "nothing was paid in, so nothing is paid out");
    assert.equal(done.json.balanceKrw, 200_000, "the credit stays credit");
    const asked = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.equal(asked.status, 409, "no refund pending any more");
    await h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
    const more = await h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 1 });
    assert.equal(more.status, 409, "an explicit amount above what was paid in is refused");
    const refunds = await h.services.db.query("SELECT 1 FROM ledger_entries WHERE org_id = $1 AND kind = 'refund'", [orgId]);
    assert.equal(refunds.length, 0);
  } finally {
    await h.close();
  }
});

test("operator credit is not paid back as money either", async () => {
  const h = await makeHarness();
  try {
    const { orgId } = await h.customer({ creditKrw: 200_000 });
    await h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
    const done = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.equal(done.status, 200);
    assert.deepEqual([done.json.refundedKrw, done.json.balanceKrw, done.json.refundPending], [0, 200_000, false]);
  } finally {
    await h.close();
  }
});
