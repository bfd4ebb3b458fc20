// The whole customer path through the console pages with app.request(): sign up,
// verify, app, review, live key, top-up, a paid call seen in usage, refund.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fixture, makeHarness } from "../support/harness.ts";
import { createAppVia, createClient, lastLinkToken, shownKey, signedUp, uniqueEmail } from "./client.ts";

// The payment sandbox (opted into, outside production); a real provider's path is test/payments/stripe-flow.test.ts.
const SANDBOX = { NODE_ENV: "test", PAYMENT_PROVIDER: "sandbox" };

test("sign-up to live key, top-up, paid call in the usage page, refund", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true", ...SANDBOX } });
  try {
    const email = uniqueEmail("flow");
    const c = createClient(h);
    assert.equal((await c.get("/")).status, 200);
    await c.get("/console/sign-up");
    const sent = await c.post("/console/sign-up", { email });
    assert.equal(sent.status, 200);
    assert.match(sent.html, /Check your e-mail/);
    // Nothing exists before the address is proven.
    assert.equal(await h.services.accounts.findUserByEmail(email), null);

    const token = await lastLinkToken(h, email);
    assert.ok(token, "verification mail in the outbox");
    const confirm = await c.get(`/console/auth/link?token=${token}`);
    assert.equal(confirm.status, 200);
    assert.equal(await h.services.accounts.findUserByEmail(email), null, "GET alone does not use the link");
    const landed = await c.postFollow("/console/auth/link", { token: token! });
    assert.equal(landed.status, 200);
    assert.match(landed.html, /organization is ready/);
    const user = await h.services.accounts.findUserByEmail(email);
    assert.ok(user?.verifiedAt, "user verified");
    assert.equal(user!.orgIds.length, 1, "org created with its owner");
    const orgId = user!.orgIds[0];

    const { appId, testKey } = await createAppVia(c, "Shop");
    assert.match(testKey, /^pd_test_/);
    let appPage = await c.get(`/console/apps/${appId}`);
    assert.match(appPage.html, /Product disabled: apply for use/);
    assert.doesNotMatch(appPage.html, /Issue live key/);
    const liveEarly = await c.post(`/console/apps/${appId}/keys/live`);
    assert.equal(liveEarly.status, 409, "no live key before the product is enabled");

    appPage = await c.postFollow(`/console/apps/${appId}/apply`, { product: "removebg" });
    assert.match(appPage.html, /In review/);
    assert.equal((await h.admin("PATCH", `/apps/${appId}`, { productEnabled: true })).status, 200);
    appPage = await c.get(`/console/apps/${appId}`);
    assert.match(appPage.html, /data-testid="app-state">Enabled</);

    const issued = await c.post(`/console/apps/${appId}/keys/live`);
    assert.equal(issued.status, 200);
    const liveKey = shownKey(issued.html);
    assert.match(liveKey ?? "", /^pd_live_/);
    // Shown once: the app page lists only the label.
    appPage = await c.get(`/console/apps/${appId}`);
    assert.ok(!appPage.html.includes(liveKey!));
    assert.ok(appPage.html.includes(liveKey!.slice(-4)));

    // Top-up: choose, confirm, ledger credit.
    await c.get("/console/credit");
    const started = await c.post("/console/credit/top-ups", { amountKrw: "50000" });
    assert.equal(started.status, 303);
    const confirmPage = await c.get(started.location!);
    assert.match(confirmPage.html, /50,000 KRW/);
    const topped = await c.postFollow(`${started.location}/confirm`);
    assert.match(topped.html, /data-testid="balance">50,000 KRW</);
    assert.equal((await h.services.billing.balances(orgId))?.balanceKrw, 50_000);

    const call = await h.removebg(liveKey!, { image_file: fixture("images/jpeg-baseline.jpg"), size: "preview" });
    assert.equal(call.status, 200, await call.clone().text());
    const requestId = call.headers.get("x-pd-request-id")!;
    const charged = Number(call.headers.get("x-pd-charged-krw"));
    assert.ok(charged > 0);

    const usage = await c.get("/console/usage");
    assert.ok(usage.html.includes(requestId), "request in the log");
    assert.match(usage.html, /data-app="Shop" data-value="1"/, "one call in the chart");
    const searched = await c.get(`/console/usage?q=${requestId.slice(0, 12)}`);
    assert.ok(searched.html.includes(requestId));
    const none = await c.get(`/console/usage?q=req_nothing_like_this`);
    assert.ok(!none.html.includes(requestId));

    // Refund request: paid calls refused until the operator completes it.
    await c.get("/console/credit");
    const refund = await c.postFollow("/console/credit/refund", { confirm: "yes" });
    assert.match(refund.html, /refund is being processed/);
    const refused = await h.removebg(liveKey!, { image_file: fixture("images/jpeg-baseline.jpg"), size: "preview" });
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as any).errors[0].code, "refund_pending");
    const done = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.equal(done.status, 200);
    // Sandbox credit was never money: nothing is paid out, and the credit stays.
    assert.equal(done.json.refundedKrw, 0);
    assert.equal(done.json.balanceKrw, 50_000 - charged);
    assert.equal((await h.admin("POST", `/orgs/${orgId}/refund/complete`, {})).status, 409);
  } finally {
    await h.close();
  }
});

test("signing up again with a registered address mails a sign-in link instead", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { email, orgId } = await signedUp(h);
    const c = createClient(h);
    await c.get("/console/sign-up");
    assert.equal((await c.post("/console/sign-up", { email })).status, 200);
    const token = await lastLinkToken(h, email);
    await c.get(`/console/auth/link?token=${token}`);
    const p = await c.postFollow("/console/auth/link", { token: token! });
    assert.equal(p.status, 200);
    const u = await h.services.accounts.findUserByEmail(email);
    assert.deepEqual(u!.orgIds, [orgId], "no second organization");

    // Sign-in for an unknown address answers the same and sends nothing.
    const stranger = uniqueEmail("nobody");
    await c.get("/console/sign-in");
    assert.equal((await c.post("/console/sign-in", { email: stranger })).status, 200);
    assert.equal(await lastLinkToken(h, stranger), null);
  } finally {
    await h.close();
  }
});
