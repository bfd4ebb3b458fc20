// A top-up paid through Stripe, end to end against the local stand-in that signs as
// Stripe documents (test/support/stripe-stand-in.ts), with NODE_ENV unset (production):
// the console opens a Checkout Session in KRW; coming back from Stripe's page credits
// nothing; only the signed webhook does, once; forged, stale, replayed and tampered
// webhooks change nothing; a refund pays back through Stripe only what was paid in, is
// recorded before Stripe is asked and is never paid twice, whatever Stripe remembers; a
// fault half way through a credit or a refund leaves nothing half done; top-ups opened
// at the same moment stay within the cap.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRefunds, createTopups, MAX_OPEN_TOPUPS, REFUND_RESEND_AFTER_MS, TOPUP_OPEN_WINDOW_MS, STRIPE_SIGNATURE_TOLERANCE_S, STRIPE_WEBHOOK_MAX_BYTES, verifyStripeWebhook } from "../../src/payments/index.ts";
import { fixture, type Harness } from "../support/harness.ts";
import { STAND_IN_SECRET_KEY, STAND_IN_WEBHOOK_SECRET, type Session, type StandIn } from "../support/stripe-stand-in.ts";
import { PUBLIC_URL, startStripeService, type StripeService } from "../support/stripe-service.ts";
import { signedUp, type Client } from "../console/client.ts";
import { poll } from "../support/poll.ts";

let service: StripeService;
let stripe: StandIn;
let h: Harness;
let t = Date.UTC(2025, 4, 14, 3, 0, 0);
const logLines: string[] = [];

before(async () => {
  service = await startStripeService({ now: () => t, logLines });
  ({ stripe, h } = service);
});
after(() => service?.close());

const nowS = () => Math.floor(t / 1000);
const deliver = (body: string, signature: string | undefined) => service.deliver(body, signature);
const delivered = (body: string, signature: string | undefined) => service.delivered(body, signature);
const startTopup = (client: Client, amountKrw: number) => service.startTopup(client, amountKrw);
const balance = (orgId: string) => service.balance(orgId);
const credits = async (orgId: string) =>
  (await h.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries WHERE org_id = $1 AND kind = 'credit'", [orgId]))[0]!.n;
const topupState = async (topupId: string) => (await h.services.db.query<{ state: string }>("SELECT state FROM topups WHERE topup_id = $1", [topupId]))[0]!.state;

describe("top-up, webhook, credit once", () => {
  test("a Checkout Session in KRW for the amount; back from Stripe's page nothing is credited; the signed webhook credits once", async () => {
    const { client, orgId } = await signedUp(h);
    const { topupId, session, page } = await startTopup(client, 50_000);
    // The session asked for: KRW, the amount, our addresses from PUBLIC_URL, the secret key, an idempotency key.
    assert.deepEqual([session.amount_total, session.currency, session.mode], [50_000, "krw", "payment"]);
    assert.equal(session.success_url, `${PUBLIC_URL}/console/credit/top-ups/${topupId}?returned=1`);
    assert.equal(session.cancel_url, `${PUBLIC_URL}/console/credit?done=cancelled`);
    const call = stripe.requests.find((r) => r.form.client_reference_id === topupId)!;
    assert.equal(call.authorization, `Bearer ${STAND_IN_SECRET_KEY}`);
    assert.equal(call.idempotencyKey, `topup-${topupId}`);
    // The page links to Stripe's hosted page.
    assert.ok(page.includes(`href="${session.url}"`), "a link to pay on Stripe's page");

    // The customer comes back (success_url) before Stripe has said anything: nothing credited.
    const back = await client.get(`/console/credit/top-ups/${topupId}?returned=1`);
    assert.match(back.html, /Waiting for the payment provider/);
    assert.equal(await balance(orgId), 0);

    const paid = stripe.pay(session.id);
    const ev = stripe.event("checkout.session.completed", paid);
    assert.deepEqual(await delivered(ev.body, stripe.sign(ev.body, nowS())), { status: 200, outcome: "credited" });
    assert.equal(await balance(orgId), 50_000);
    assert.equal(await topupState(topupId), "confirmed");

    // Stripe's retry of the same event (same ID, signed anew): acted on already.
    t += 60_000;
    assert.deepEqual(await delivered(ev.body, stripe.sign(ev.body, nowS())), { status: 200, outcome: "duplicate" });
    // Another event about the same payment: the top-up is credited already.
    const late = stripe.event("checkout.session.async_payment_succeeded", paid);
    assert.deepEqual(await delivered(late.body, stripe.sign(late.body, nowS())), { status: 200, outcome: "duplicate" });
    assert.equal(await balance(orgId), 50_000);
    assert.equal(await credits(orgId), 1);
    assert.match((await client.get("/console/credit")).html, /data-testid="balance">50,000 KRW</);
    // The secret key is never logged.
    assert.ok(!logLines.some((l) => l.includes(STAND_IN_SECRET_KEY) || l.includes(STAND_IN_WEBHOOK_SECRET)));
  });

  test("one event delivered five times at once credits once", async () => {
    const { client, orgId } = await signedUp(h);
    const { session } = await startTopup(client, 10_000);
    const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
    const answers = await Promise.all(Array.from({ length: 5 }, () => delivered(ev.body, stripe.sign(ev.body, nowS()))));
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200]);
    assert.deepEqual(answers.map((a) => a.outcome).sort(), ["credited", "duplicate", "duplicate", "duplicate", "duplicate"]);
    assert.equal(await balance(orgId), 10_000);
    assert.equal(await credits(orgId), 1);
  });

  test("a session paid later (bank transfer): completed while unpaid credits nothing, async_payment_succeeded credits; expired fails", async () => {
    const { client, orgId } = await signedUp(h);
    const { topupId, session } = await startTopup(client, 10_000);
    const waiting = stripe.event("checkout.session.completed", session);
    assert.deepEqual(await delivered(waiting.body, stripe.sign(waiting.body, nowS())), { status: 200, outcome: "ignored" });
    assert.equal(await balance(orgId), 0);
    const settled = stripe.event("checkout.session.async_payment_succeeded", stripe.pay(session.id));
    assert.equal((await delivered(settled.body, stripe.sign(settled.body, nowS()))).outcome, "credited");
    assert.equal(await balance(orgId), 10_000);

    const other = await startTopup(client, 50_000);
    const expired = stripe.event("checkout.session.expired", { ...other.session, status: "expired" });
    assert.equal((await delivered(expired.body, stripe.sign(expired.body, nowS()))).outcome, "failed");
    assert.equal(await topupState(other.topupId), "failed");
    // A payment event for a failed top-up credits nothing.
    const tooLate = stripe.event("checkout.session.completed", stripe.pay(other.session.id));
    assert.equal((await delivered(tooLate.body, stripe.sign(tooLate.body, nowS()))).outcome, "refused");
    assert.equal(await balance(orgId), 10_000);
    assert.equal(await topupState(topupId), "confirmed");
  });
});

describe("forged, replayed and tampered webhooks change nothing", () => {
  test("no signature, another secret, a malformed header, a stale or future timestamp: 400, nothing credited", async () => {
    const { client, orgId } = await signedUp(h);
    const { topupId, session } = await startTopup(client, 100_000);
    const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
    const tooOld = nowS() - STRIPE_SIGNATURE_TOLERANCE_S - 1;
    const tooNew = nowS() + STRIPE_SIGNATURE_TOLERANCE_S + 1;
    const v1 = stripe.sign(ev.body, nowS()).split(",")[1]!;
    for (const signature of [
      undefined,
      "",
      stripe.sign(ev.body, nowS(), "whsec_attackers0wnsecret"),
      `t=${nowS()}`,
      `v1=${v1.slice(3)}`,
      `t=${nowS()},v1=${"0".repeat(64)}`,
      `t=${nowS()},v0=${v1.slice(3)}`,
      stripe.sign(ev.body, tooOld),
      stripe.sign(ev.body, tooNew),
    ]) {
      const r = await delivered(ev.body, signature);
      assert.equal(r.status, 400, `signature ${signature}`);
    }
    assert.equal(await balance(orgId), 0);
    assert.equal(await topupState(topupId), "pending");
    // The real delivery still works: refusals recorded nothing.
    assert.equal((await delivered(ev.body, stripe.sign(ev.body, nowS()))).outcome, "credited");
  });

  test("a captured delivery replayed: within the tolerance it is an event already acted on; after it, refused as stale", async () => {
    const { client, orgId } = await signedUp(h);
    const { session } = await startTopup(client, 10_000);
    const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
    const signature = stripe.sign(ev.body, nowS());
    assert.equal((await delivered(ev.body, signature)).outcome, "credited");
    assert.deepEqual(await delivered(ev.body, signature), { status: 200, outcome: "duplicate" });
    t += (STRIPE_SIGNATURE_TOLERANCE_S + 1) * 1000;
    assert.equal((await delivered(ev.body, signature)).status, 400);
    assert.equal(await balance(orgId), 10_000);
    assert.equal(await credits(orgId), 1);
  });

  test("a tampered amount: a body changed after signing is refused 400; a signed amount that is not the order's is refused and the top-up failed", async () => {
    const { client, orgId } = await signedUp(h);
    const { topupId, session } = await startTopup(client, 10_000);
    const paid = stripe.pay(session.id);
    const ev = stripe.event("checkout.session.completed", paid);
    const signature = stripe.sign(ev.body, nowS());
    const tampered = ev.body.replace('"amount_total":10000', '"amount_total":100000');
    assert.notEqual(tampered, ev.body);
    assert.equal((await delivered(tampered, signature)).status, 400);
    assert.equal(await balance(orgId), 0);

    // Signed by Stripe, but not what the order was (another amount, another currency): never credited.
    for (const [patch, other] of [[{ amount_total: 100 }, "amount"], [{ currency: "usd" }, "currency"]] as const) {
      const next = await startTopup(client, 10_000);
      const wrong = stripe.event("checkout.session.completed", stripe.pay(next.session.id), patch);
      assert.deepEqual(await delivered(wrong.body, stripe.sign(wrong.body, nowS())), { status: 200, outcome: "refused" }, other);
      assert.equal(await topupState(next.topupId), "failed");
    }
    // An event of one top-up's session that names another top-up.
    const victim = await startTopup(client, 100_000);
    const crossed = stripe.event("checkout.session.completed", stripe.pay(victim.session.id), { client_reference_id: topupId });
    assert.equal((await delivered(crossed.body, stripe.sign(crossed.body, nowS()))).outcome, "refused");
    assert.equal(await balance(orgId), 0);
    assert.ok(logLines.some((l) => l.includes('"outcome":"refused"') && l.includes('"level":"error"')), "refusals are logged as errors for the operator");
    // The untampered event still credits its own top-up.
    assert.equal((await delivered(ev.body, stripe.sign(ev.body, nowS()))).outcome, "credited");
    assert.equal(await balance(orgId), 10_000);
  });

  test("a body over the bound is refused 413 before it is read whole; an event for no top-up of ours is acknowledged and changes nothing", async () => {
    const big = JSON.stringify({ id: "evt_big", type: "checkout.session.completed", pad: "x".repeat(STRIPE_WEBHOOK_MAX_BYTES) });
    assert.equal((await deliver(big, stripe.sign(big, nowS()))).status, 413);
    const stranger: Session = { ...[...stripe.sessions.values()][0]!, id: "cs_test_notours", client_reference_id: "top_notours" };
    const ev = stripe.event("checkout.session.completed", { ...stranger, payment_status: "paid", payment_intent: "pi_x" });
    assert.deepEqual(await delivered(ev.body, stripe.sign(ev.body, nowS())), { status: 200, outcome: "unknown" });
    const other = stripe.event("customer.created", stranger);
    assert.deepEqual(await delivered(other.body, stripe.sign(other.body, nowS())), { status: 200, outcome: "ignored" });
  });
});

describe("refunds pay back only what was paid in", () => {
  test("operator credit + two Stripe top-ups − one paid call: the refund pays back the Stripe money through Stripe, the rest stays credit", async () => {
    const { client, orgId } = await signedUp(h);
    await h.admin("POST", `/orgs/${orgId}/credit`, { amountKrw: 100_000 });
    const refsByAmount = new Map<number, string>();
    for (const amount of [50_000, 10_000]) {
      const { session } = await startTopup(client, amount);
      const paid = stripe.pay(session.id);
      refsByAmount.set(amount, paid.payment_intent!);
      const ev = stripe.event("checkout.session.completed", paid);
      assert.equal((await delivered(ev.body, stripe.sign(ev.body, nowS()))).outcome, "credited");
      t += 1000;
    }
    // A paid call spends 110 KRW.
    const app = await h.admin("POST", `/orgs/${orgId}/apps`, { name: "shop", productEnabled: true });
    const key = await h.admin("POST", `/apps/${app.json.appId}/keys`, { kind: "live" });
    const call = await h.removebg(key.json.key, { image_file: fixture("images/orient-upright.png") });
    assert.equal(call.status, 200);
    const charged = Number(call.headers.get("x-pd-charged-krw"));
    assert.equal(await balance(orgId), 160_000 - charged);

    await client.get("/console/credit");
    await client.postFollow("/console/credit/refund", { confirm: "yes" });
    // More than was paid in through Stripe is refused, whatever the balance.
    assert.equal((await h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 60_001 })).status, 409);
    const refundsBefore = stripe.refunds.length;
    const done = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.equal(done.status, 200, JSON.stringify(done.json));
    assert.deepEqual([done.json.refundedKrw, done.json.balanceKrw, done.json.refundPending], [60_000, 100_000 - charged, false]);
    // Paid back at Stripe against the payments that took the money, newest first.
    const made = stripe.refunds.slice(refundsBefore).map((r) => [r.payment_intent, r.amount]);
    assert.deepEqual(made, [[refsByAmount.get(10_000), 10_000], [refsByAmount.get(50_000), 50_000]]);
    const entries = await h.services.db.query<{ amount_krw: number }>("SELECT amount_krw FROM ledger_entries WHERE org_id = $1 AND kind = 'refund' ORDER BY entry_id", [orgId]);
    assert.deepEqual(entries.map((e) => e.amount_krw), [-10_000, -50_000]);

    // Asked again later: nothing left that was paid in.
    await h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
    const again = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.deepEqual([again.status, again.json.refundedKrw, again.json.balanceKrw], [200, 0, 100_000 - charged]);
    assert.equal(stripe.refunds.length, refundsBefore + 2);
  });

  test("Stripe unreachable during a refund: recorded in flight, its credit off the balance, the request still open; asked again it pays once", async () => {
    const { client, orgId } = await signedUp(h);
    const { session } = await startTopup(client, 10_000);
    const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
    assert.equal((await delivered(ev.body, stripe.sign(ev.body, nowS()))).outcome, "credited");
    await h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
    const before = stripe.refunds.length;
    stripe.failWith = 500;
    try {
      const failed = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
      assert.equal(failed.status, 502, JSON.stringify(failed.json));
      assert.match(failed.json.errors[0].title, /in flight/);
    } finally {
      stripe.failWith = undefined;
    }
    assert.equal(await balance(orgId), 0, "the refund is taken off before Stripe answers");
    assert.equal((await h.services.accounts.getOrg(orgId))!.refundPending, true);
    // Asked again at once: Stripe has no such refund, and the first request may still be on its way.
    const soon = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.equal(soon.status, 409, JSON.stringify(soon.json));
    assert.equal(stripe.refunds.length, before);
    t += REFUND_RESEND_AFTER_MS;
    const done = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.deepEqual([done.status, done.json.refundedKrw, done.json.balanceKrw], [200, 10_000, 0], JSON.stringify(done.json));
    assert.deepEqual(done.json.refunds.map((r: { state: string }) => r.state), ["succeeded"]);
    assert.equal(stripe.refunds.length, before + 1);
  });

  test("a refund Stripe refuses: the credit is back on the balance at once and the request stays open", async () => {
    const { client, orgId } = await signedUp(h);
    const { session } = await startTopup(client, 10_000);
    const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
    assert.equal((await delivered(ev.body, stripe.sign(ev.body, nowS()))).outcome, "credited");
    await h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
    stripe.failWith = 400;
    try {
      const refused = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
      assert.equal(refused.status, 409, JSON.stringify(refused.json));
      assert.match(refused.json.errors[0].title, /back on the balance/);
    } finally {
      stripe.failWith = undefined;
    }
    assert.equal(await balance(orgId), 10_000);
    assert.equal((await h.services.accounts.getOrg(orgId))!.refundPending, true);
    const kinds = await h.services.db.query<{ kind: string; amount_krw: number }>("SELECT kind, amount_krw FROM ledger_entries WHERE org_id = $1 AND kind LIKE 'refund%' ORDER BY entry_id", [orgId]);
    assert.deepEqual(kinds.map((k) => [k.kind, k.amount_krw]), [["refund", -10_000], ["refund_returned", 10_000]]);
    const done = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.deepEqual([done.status, done.json.refundedKrw, done.json.balanceKrw], [200, 10_000, 0], JSON.stringify(done.json));
  });

  test("Stripe unreachable when a payment is opened: the console says so, nothing is recorded", async () => {
    const { client, orgId } = await signedUp(h);
    await client.get("/console/credit");
    stripe.failWith = 500;
    try {
      const r = await client.post("/console/credit/top-ups", { amountKrw: "10000" });
      assert.equal(r.status, 503);
      assert.match(r.html, /could not open a payment/);
    } finally {
      stripe.failWith = undefined;
    }
    assert.equal((await h.services.db.query("SELECT 1 FROM topups WHERE org_id = $1", [orgId])).length, 0);
  });
});

describe("opening top-ups is bounded", () => {
  test(`a free account opens at most ${MAX_OPEN_TOPUPS} unpaid top-ups in ${TOPUP_OPEN_WINDOW_MS / 60_000} minutes: the next one reaches neither Stripe nor the table`, async () => {
    const { client, orgId } = await signedUp(h);
    for (let i = 0; i < MAX_OPEN_TOPUPS; i++) await startTopup(client, 10_000);
    const sessions = stripe.sessions.size;
    await client.get("/console/credit");
    const refused = await client.post("/console/credit/top-ups", { amountKrw: "10000" });
    assert.equal(refused.status, 429, refused.html);
    assert.match(refused.html, /not paid/);
    assert.equal(stripe.sessions.size, sessions, "no Checkout Session was made");
    const rows = await h.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM topups WHERE org_id = $1", [orgId]);
    assert.equal(rows[0]!.n, MAX_OPEN_TOPUPS);
    // Later (the session kept in use meanwhile), the oldest have left the window.
    for (let waited = 0; waited <= TOPUP_OPEN_WINDOW_MS; waited += 10 * 60_000) {
      t += 10 * 60_000;
      await client.get("/console/credit");
    }
    await startTopup(client, 10_000);
  });
});

describe("opening top-ups at the same moment stays within the cap", () => {
  test(`20 top-ups at once with Stripe held until all have arrived: exactly ${MAX_OPEN_TOPUPS} open a Checkout Session, the rest are 429`, async () => {
    const { client, orgId } = await signedUp(h);
    await client.get("/console/credit");
    const sessions = stripe.sessions.size;
    const held = stripe.holdCheckouts();
    let answered = 0;
    const posts = Array.from({ length: 20 }, () => client.post("/console/credit/top-ups", { amountKrw: "10000" }).finally(() => answered++));
    try {
      // Whatever the order and the speed: every request is either answered or waiting at Stripe.
      await poll("every top-up answered or at Stripe", async () => answered + held.waiting(), (n) => n === 20);
    } finally {
      held.release();
    }
    const statuses = (await Promise.all(posts)).map((p) => p.status);
    assert.equal(statuses.filter((s) => s === 303).length, MAX_OPEN_TOPUPS, `statuses ${statuses}`);
    assert.equal(statuses.filter((s) => s === 429).length, 20 - MAX_OPEN_TOPUPS, `statuses ${statuses}`);
    assert.equal(stripe.sessions.size - sessions, MAX_OPEN_TOPUPS, "no Checkout Session beyond the cap");
    const rows = await h.services.db.query<{ state: string; n: number }>("SELECT state, count(*)::int AS n FROM topups WHERE org_id = $1 GROUP BY state", [orgId]);
    assert.deepEqual(rows.map((r) => [r.state, r.n]), [["pending", MAX_OPEN_TOPUPS]]);
  });

  test("a top-up Stripe refuses to open gives its place under the cap back", async () => {
    const { client, orgId } = await signedUp(h);
    await client.get("/console/credit");
    stripe.failWith = 500;
    try {
      for (let i = 0; i < MAX_OPEN_TOPUPS + 1; i++) assert.equal((await client.post("/console/credit/top-ups", { amountKrw: "10000" })).status, 503);
    } finally {
      stripe.failWith = undefined;
    }
    assert.equal((await h.services.db.query("SELECT 1 FROM topups WHERE org_id = $1", [orgId])).length, 0);
    await startTopup(client, 10_000);
  });
});

describe("a refund's money and its entry stay equal", () => {
  /** Won paid back at Stripe for this org's payments, and won its ledger took off as refunds. */
  async function paidBackAndEntered(orgId: string, paymentIntents: string[]): Promise<[number, number]> {
    const paid = stripe.refunds.filter((r) => paymentIntents.includes(r.payment_intent)).reduce((n, r) => n + r.amount, 0);
    const rows = await h.services.db.query<{ n: number }>("SELECT coalesce(sum(-amount_krw), 0)::int AS n FROM ledger_entries WHERE org_id = $1 AND kind = 'refund'", [orgId]);
    return [paid, rows[0]!.n];
  }

  const paidTopup = async (client: Client, amountKrw: number) => (await service.paidTopup(client, amountKrw)).paymentIntent;

  test("two completions at once with different amounts: Stripe pays back only what the ledger takes off", async () => {
    const { client, orgId } = await signedUp(h);
    const pi = await paidTopup(client, 10_000);
    await client.get("/console/credit");
    await client.postFollow("/console/credit/refund", { confirm: "yes" });
    const answers = await Promise.all([
      h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 4_000 }),
      h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 6_000 }),
    ]);
    const [paid, entered] = await paidBackAndEntered(orgId, [pi]);
    assert.equal(paid, entered, `paid back at Stripe ${paid} KRW, taken off the balance ${entered} KRW (answers ${answers.map((a) => a.status)})`);
    assert.equal(await balance(orgId), 10_000 - entered);
    assert.ok(answers.some((a) => a.status === 200), "one of them completes");
  });

  test("a refund whose answer is lost, asked again after Stripe has forgotten its idempotency key: found at Stripe by its ID, paid once", async () => {
    const { client, orgId } = await signedUp(h);
    const pi = await paidTopup(client, 50_000);
    await h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
    stripe.loseNextAnswer = true;
    const lost = await h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 10_000 });
    assert.equal(lost.status, 502, JSON.stringify(lost.json));
    assert.deepEqual(await paidBackAndEntered(orgId, [pi]), [10_000, 10_000], "paid at Stripe, and taken off before Stripe was asked");
    // A day and more later: Stripe keeps an idempotency key at least 24 hours, and this one is gone.
    t += 25 * 3600_000;
    const again = await h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 10_000 });
    assert.equal(again.status, 200, JSON.stringify(again.json));
    assert.equal(again.json.refundedKrw, 10_000, "the completion asked again counts the refund it made");
    assert.deepEqual(await paidBackAndEntered(orgId, [pi]), [10_000, 10_000]);
    assert.equal(stripe.refunds.filter((r) => r.payment_intent === pi).length, 1);
    assert.equal(await balance(orgId), 40_000);
  });
});

describe("a fault half way leaves nothing half done", () => {
  test("a credit that fails rolls the event back with it: the provider's next delivery credits once", async () => {
    const { client, orgId } = await signedUp(h);
    const { topupId, session } = await startTopup(client, 10_000);
    const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
    const verified = await verifyStripeWebhook(new TextEncoder().encode(ev.body), stripe.sign(ev.body, nowS()), STAND_IN_WEBHOOK_SECRET, t);
    assert.ok(verified.ok);
    const s = h.services;
    const failing = createTopups({
      db: s.db,
      now: s.now,
      billing: { credit: async () => Promise.reject(new Error("store went away")), enterMovement: s.billing.enterMovement },
      provider: s.payments.provider,
      refundPending: async () => false,
      log: () => {},
    });
    await assert.rejects(failing.settle("stripe", verified.event), /store went away/);
    assert.equal((await h.services.db.query("SELECT 1 FROM payment_events WHERE event_id = $1", [ev.id])).length, 0, "the event is not recorded");
    assert.equal(await topupState(topupId), "pending");
    assert.equal((await delivered(ev.body, stripe.sign(ev.body, nowS()))).outcome, "credited");
    assert.equal(await balance(orgId), 10_000);
    assert.equal(await credits(orgId), 1);
  });

  test("a refund whose entry fails is never asked of Stripe: nothing is recorded, and asked again it pays once", async () => {
    const { client, orgId } = await signedUp(h);
    const { session } = await startTopup(client, 50_000);
    const ev = stripe.event("checkout.session.completed", stripe.pay(session.id));
    assert.equal((await delivered(ev.body, stripe.sign(ev.body, nowS()))).outcome, "credited");
    const s = h.services;
    const before = stripe.refunds.length;
    const failing = createRefunds({
      db: s.db,
      billing: { enterMovement: async () => Promise.reject(new Error("store went away")) },
      provider: s.payments.provider,
      now: s.now,
      log: () => {},
    });
    await assert.rejects(failing.complete(orgId, 50_000, async () => 50_000, "refund"), /store went away/);
    assert.equal(stripe.refunds.length, before, "Stripe was not asked");
    assert.equal((await s.db.query("SELECT 1 FROM refunds WHERE org_id = $1", [orgId])).length, 0, "nothing recorded");
    assert.equal(await balance(orgId), 50_000);
    await h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
    const done = await h.admin("POST", `/orgs/${orgId}/refund/complete`, {});
    assert.deepEqual([done.status, done.json.refundedKrw, done.json.balanceKrw], [200, 50_000, 0]);
    assert.equal(stripe.refunds.length, before + 1);
  });
});
