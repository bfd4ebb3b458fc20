// Every movement of money Stripe reports reaches the ledger, end to end against the
// stand-in that signs and shapes events as Stripe documents them: a top-up; a dispute
// opened (the credit withheld at once, the balance below zero, paid calls refused 402),
// won (given back); a second dispute lost (kept off); a refund answered pending, then
// failed (back on the balance), another pending then succeeded; refunds made in Stripe's
// Dashboard (charge.refunded, with and without the refunds list); each event delivered
// twice and out of order. Then the reconciliation, through the operator API and the CLI:
// no difference, and exactly one once a ledger row is removed by hand.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../../src/cli/main.ts";
import { ReconciliationReport } from "../../src/openapi/schemas.ts";
import { fixture, OPERATOR_TOKEN } from "../support/harness.ts";
import { startStripeService, type StripeService } from "../support/stripe-service.ts";
import { signedUp } from "../console/client.ts";

// A day of its own (the stores may be shared with earlier runs): nothing else is reconciled on it.
const DAY = Date.UTC(2040, 0, 1) + Math.floor(Math.random() * 3650) * 86_400_000;
let t = DAY + 3 * 3600_000;
let s: StripeService;
before(async () => {
  s = await startStripeService({ now: () => t });
});
after(() => s?.close());

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const range = { from: day(DAY), to: day(DAY + 86_400_000) };

/** Delivers each event twice, in the order given; answers the outcomes. */
async function deliverTwice(...events: { body: string }[]): Promise<string[]> {
  const outcomes: string[] = [];
  for (const ev of events) {
    for (let i = 0; i < 2; i++) {
      const r = await s.send(ev.body);
      assert.equal(r.status, 200);
      outcomes.push(r.outcome!);
    }
    t += 1000;
  }
  return outcomes;
}

async function paidCall(key: string): Promise<number> {
  return (await s.h.removebg(key, { image_file: fixture("images/orient-upright.png"), size: "preview" })).status;
}

async function reconcile(orgIds: string[]) {
  const r = await s.h.admin("GET", `/reconciliation?from=${range.from}&to=${range.to}`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  ReconciliationReport.parse(r.json);
  const mine = (r.json.organizations as { orgId: string; differences: unknown[]; provider: unknown; ledger: unknown }[]).filter((o) => orgIds.includes(o.orgId));
  return { report: r.json, mine, differences: [...mine.flatMap((o) => o.differences), ...r.json.unmatched] as { kind: string; providerRef: string; reason: string }[] };
}

describe("disputes, refunds and Dashboard refunds reach the ledger once, whatever the order", () => {
  let orgId: string;
  let liveKey: string;
  let client: Awaited<ReturnType<typeof signedUp>>["client"];

  test("a dispute opened withholds the credit at once, below zero, and paid calls are refused 402; won, it comes back", async () => {
    ({ client, orgId } = await signedUp(s.h));
    const app = await s.h.admin("POST", `/orgs/${orgId}/apps`, { name: "shop", productEnabled: true });
    liveKey = (await s.h.admin("POST", `/apps/${app.json.appId}/keys`, { kind: "live" })).json.key;
    const { paymentIntent } = await s.paidTopup(client, 10_000);
    assert.equal(await paidCall(liveKey), 200);
    const spent = 10_000 - (await s.balance(orgId));
    assert.ok(spent > 0);

    const dispute = s.stripe.openDispute(paymentIntent);
    const opened = s.stripe.event("charge.dispute.created", dispute);
    assert.deepEqual(await deliverTwice(opened), ["disputed", "duplicate"]);
    assert.equal(await s.balance(orgId), -spent, "the whole disputed payment is withheld, below zero");
    const refused = await s.h.removebg(liveKey, { image_file: fixture("images/orient-upright.png"), size: "preview" });
    assert.equal(refused.status, 402);
    assert.equal(((await refused.json()) as { errors: { code: string }[] }).errors[0]!.code, "insufficient_credits");
    const account = await s.h.app.request("/v1.0/account", { headers: { "x-api-key": liveKey } });
    assert.equal(((await account.json()) as { data: { balanceKrw: number } }).data.balanceKrw, -spent);

    // Under review, then won; a late "updated" from before the close changes nothing.
    const reviewing = s.stripe.event("charge.dispute.updated", { ...dispute, status: "under_review" });
    const won = s.stripe.event("charge.dispute.closed", s.stripe.closeDispute(dispute.id, "won"));
    assert.deepEqual(await deliverTwice(won, reviewing), ["dispute_won", "duplicate", "duplicate", "duplicate"]);
    assert.equal(await s.balance(orgId), 10_000 - spent);
    assert.equal(await paidCall(liveKey), 200);
  });

  test("a second dispute, closed lost before its opening event arrives: withheld once and kept off", async () => {
    const before = await s.balance(orgId);
    const { paymentIntent } = await s.paidTopup(client, 50_000);
    const dispute = s.stripe.openDispute(paymentIntent, 20_000);
    const opened = s.stripe.event("charge.dispute.created", dispute);
    const lost = s.stripe.event("charge.dispute.closed", s.stripe.closeDispute(dispute.id, "lost"));
    assert.deepEqual(await deliverTwice(lost, opened), ["disputed", "duplicate", "duplicate", "duplicate"]);
    assert.equal(await s.balance(orgId), before + 50_000 - 20_000);
    const entries = await s.h.services.db.query<{ kind: string; amount_krw: number }>("SELECT kind, amount_krw FROM ledger_entries WHERE money_ref = $1", [dispute.id]);
    assert.deepEqual(entries.map((e) => [e.kind, e.amount_krw]), [["dispute", -20_000]]);
  });

  test("a refund Stripe answers pending is taken off at once and paid only on succeeded; one that fails comes back; the charge.refunded echo takes nothing twice", async () => {
    const { paymentIntent } = await s.paidTopup(client, 100_000);
    const before = await s.balance(orgId);
    await client.get("/console/credit");
    await client.postFollow("/console/credit/refund", { confirm: "yes" });
    s.stripe.refundStatus = "pending";
    try {
      const first = await s.h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 4_000 });
      assert.equal(first.status, 200, JSON.stringify(first.json));
      assert.deepEqual(first.json.refunds.map((r: { state: string; amountKrw: number }) => [r.state, r.amountKrw]), [["pending", 4_000]]);
      assert.equal(await s.balance(orgId), before - 4_000);
      const refund = s.stripe.refunds.at(-1)!;
      assert.equal(refund.metadata.refund_id, first.json.refunds[0].refundId, "Stripe's refund names ours");
      const created = s.stripe.event("refund.created", refund);
      const echo = s.stripe.event("charge.refunded", s.stripe.charge(paymentIntent));
      const failed = s.stripe.event("refund.failed", s.stripe.settleRefund(refund.id, "failed"));
      // The failure arrives first; the creation and the charge's echo of it after.
      assert.deepEqual(await deliverTwice(failed, created, echo), ["refund_returned", "duplicate", "duplicate", "duplicate", "duplicate", "duplicate"]);
      assert.equal(await s.balance(orgId), before, "the failed refund's 4,000 KRW is back");

      await s.h.admin("PATCH", `/orgs/${orgId}`, { refundPending: true });
      const second = await s.h.admin("POST", `/orgs/${orgId}/refund/complete`, { amountKrw: 5_000 });
      assert.equal(second.status, 200, JSON.stringify(second.json));
      const paid = s.stripe.refunds.at(-1)!;
      const pendingEcho = s.stripe.event("charge.refunded", s.stripe.charge(paymentIntent));
      const succeeded = s.stripe.event("refund.updated", s.stripe.settleRefund(paid.id, "succeeded"));
      assert.deepEqual(await deliverTwice(pendingEcho, succeeded), ["duplicate", "duplicate", "refund_succeeded", "duplicate"]);
      assert.equal(await s.balance(orgId), before - 5_000);
      const states = await s.h.services.db.query<{ state: string }>("SELECT state FROM refunds WHERE org_id = $1 ORDER BY created_at", [orgId]);
      assert.deepEqual(states.map((r) => r.state), ["failed", "succeeded"]);
    } finally {
      s.stripe.refundStatus = "succeeded";
    }
  });

  test("a refund made in Stripe's Dashboard takes the credit off once: from charge.refunded with its refunds, or read from Stripe without them", async () => {
    const { paymentIntent } = await s.paidTopup(client, 10_000);
    const before = await s.balance(orgId);
    const dash = s.stripe.dashboardRefund(paymentIntent, 3_000);
    const refunded = s.stripe.event("charge.refunded", s.stripe.charge(paymentIntent));
    const created = s.stripe.event("refund.created", dash);
    assert.deepEqual(await deliverTwice(refunded, created), ["refunded", "duplicate", "duplicate", "duplicate"]);
    assert.equal(await s.balance(orgId), before - 3_000);

    // Newer API versions leave the list out of the Charge: the service reads it from Stripe.
    s.stripe.dashboardRefund(paymentIntent, 2_000);
    const bare = s.stripe.event("charge.refunded", s.stripe.charge(paymentIntent, false));
    const reads = s.stripe.requests.length;
    assert.deepEqual(await deliverTwice(bare), ["refunded", "duplicate"]);
    assert.ok(s.stripe.requests.slice(reads).some((r) => r.method === "GET" && r.path === "/v1/refunds"), "the charge's refunds read from Stripe");
    assert.equal(await s.balance(orgId), before - 5_000);
  });

  test("the reconciliation finds no difference; a ledger row removed by hand is exactly one, named", async () => {
    const clean = await reconcile([orgId]);
    assert.deepEqual(clean.differences, [], JSON.stringify(clean.differences));
    assert.equal(clean.mine.length, 1);
    const totals = clean.mine[0]!;
    assert.deepEqual(totals.provider, totals.ledger);
    assert.deepEqual(totals.provider, { paymentsKrw: 170_000, refundsKrw: 10_000, disputesKrw: 20_000 });

    // The CLI says the same, as a table and as JSON, exit 0.
    const env = { PD_OPERATOR_TOKEN: OPERATOR_TOKEN, PD_BASE_URL: "http://service.test" };
    const out: string[] = [];
    const cli = (args: string[]) => main(["reconcile", "--from", range.from, "--to", range.to, ...args], (l) => out.push(l), env, (l) => out.push(l));
    const viaApp = globalThis.fetch;
    // The CLI's requests go to the service in process; the service's own to the stand-in.
    globalThis.fetch = ((url: string | URL | Request, init?: RequestInit) =>
      String(url).startsWith(env.PD_BASE_URL) ? Promise.resolve(s.h.app.request(String(url), init)) : viaApp(url, init)) as typeof fetch;
    try {
      assert.equal(await cli([]), clean.report.differenceCount === 0 ? 0 : 1, out.join("\n"));
      assert.ok(out.some((l) => l.startsWith(orgId) && / 0$/.test(l)), out.join("\n"));
      out.length = 0;
      assert.equal(await cli(["--json"]), clean.report.differenceCount === 0 ? 0 : 1);
      assert.ok(JSON.parse(out.join("\n")).organizations.some((o: { orgId: string }) => o.orgId === orgId));

      // The won dispute's give-back removed by hand.
      const won = await s.h.services.db.query<{ money_ref: string }>("DELETE FROM ledger_entries WHERE org_id = $1 AND kind = 'dispute_returned' RETURNING money_ref", [orgId]);
      assert.equal(won.length, 1);
      const planted = await reconcile([orgId]);
      assert.equal(planted.differences.length, 1, JSON.stringify(planted.differences));
      assert.deepEqual([planted.differences[0]!.kind, planted.differences[0]!.providerRef], ["dispute", won[0]!.money_ref]);
      out.length = 0;
      assert.equal(await cli([]), 1);
      assert.ok(out.some((l) => l.includes(won[0]!.money_ref) && l.includes("dispute")), out.join("\n"));
    } finally {
      globalThis.fetch = viaApp;
    }
  });
});

describe("the reconciliation's range and caller", () => {
  test("from and to are required, are days or date-times with a zone, to after from, at most 31 days; nothing else in the query", async () => {
    for (const q of [
      "",
      "?from=2025-05-01",
      "?to=2025-05-02",
      "?from=2025-05-01&to=2025-05-01",
      "?from=2025-05-02&to=2025-05-01",
      "?from=2025-05-01&to=2025-06-02",
      "?from=2025-02-30&to=2025-03-02",
      "?from=2025-05-01T00:00:00&to=2025-05-02",
      "?from=yesterday&to=2025-05-02",
      "?from=2025-05-01&from=2025-05-02&to=2025-05-03",
      "?from=2025-05-01&to=2025-05-02&org=org_x",
      `?from=${"9".repeat(5000)}&to=2025-05-02`,
    ]) {
      const r = await s.h.admin("GET", `/reconciliation${q}`);
      assert.equal(r.status, 400, `${q.slice(0, 80)}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.errors[0].code, "invalid_parameter");
    }
    const ok = await s.h.admin("GET", "/reconciliation?from=2025-05-01T00:00:00%2B09:00&to=2025-05-31");
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(ok.json.from, "2025-04-30T15:00:00.000Z");
    const anonymous = await s.h.app.request("/admin/v1/reconciliation?from=2025-05-01&to=2025-05-02");
    assert.equal(anonymous.status, 401);
  });

  test("Stripe unreachable: 502, nothing guessed", async () => {
    s.stripe.failWith = 500;
    try {
      const r = await s.h.admin("GET", `/reconciliation?from=${range.from}&to=${range.to}`);
      assert.equal(r.status, 502, JSON.stringify(r.json));
    } finally {
      s.stripe.failWith = undefined;
    }
  });

  test("Stripe's lists are read page by page to their end: the same comparison as in one page", async () => {
    const whole = await s.h.admin("GET", `/reconciliation?from=${range.from}&to=${range.to}`);
    s.stripe.pageSize = 2;
    const reads = s.stripe.requests.length;
    try {
      const paged = await s.h.admin("GET", `/reconciliation?from=${range.from}&to=${range.to}`);
      assert.equal(paged.status, 200);
      const pages = s.stripe.requests.slice(reads).filter((r) => r.method === "GET" && r.path === "/v1/refunds");
      assert.ok(pages.length >= 2, `${pages.length} pages of refunds`);
      assert.ok(pages.slice(1).every((p) => p.query.starting_after?.startsWith("re_")), "each later page starts after the last refund of the one before");
      assert.deepEqual(paged.json, whole.json);
    } finally {
      s.stripe.pageSize = 100;
    }
  });
});
