// Credit: balances, top-up (choose an amount → pay on the provider's page → the ledger is
// credited when the provider confirms the payment, src/payments/topups.ts) and the refund
// request, which refuses paid calls until an operator completes it
// (POST /admin/v1/orgs/{id}/refund/complete). With no provider configured, top-up is
// not offered. Coming back from the provider's page credits nothing by itself.
import type { Hono } from "hono";
import { TOPUP_AMOUNTS_KRW, type Topup } from "../../payments/index.ts";
import type { ConsoleDeps, ConsoleStores } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { baseUrl, errorPage, formOf, notFound, page, type Ctx } from "../http.tsx";
import { Csrf, krw, Notice, when } from "../pages/layout.tsx";
import { ScrollRegion } from "../pages/scroll-region.tsx";

const UNAVAILABLE = "Top-up is not available on this service: no payment provider is configured. Ask the operator to add credit.";

export function registerCreditRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps, _st: ConsoleStores): void {
  const topupPage = (id: string) => `${baseUrl(d)}/console/credit/top-ups/${id}`;

  async function creditPage(c: Ctx, amountError?: string) {
    const s = c.get("session")!;
    const [org, topups] = await Promise.all([d.accounts.getOrg(s.orgId), d.topups.list(s.orgId, 10)]);
    if (!org) return notFound(c);
    const done = c.req.query("done");
    return page(
      c,
      "Credit",
      <>
        {done === "topup" ? <Notice kind="ok">Top-up complete.</Notice> : null}
        {done === "refund" ? <Notice kind="ok">Refund requested.</Notice> : null}
        {done === "cancelled" ? <Notice kind="ok">Payment cancelled: nothing was charged.</Notice> : null}
        <div class="cards">
          <div class="card"><p>Balance</p><p class="stat" data-testid="balance">{krw(org.balanceKrw)}</p></div>
          <div class="card">
            <p>Available</p><p class="stat" data-testid="available">{krw(org.availableKrw)}</p>
            <p class="hint">Balance minus amounts reserved by requests in progress.</p>
          </div>
        </div>
        {org.refundPending ? (
          <Notice kind="warn">A refund is being processed. Paid calls are refused (403 refund_pending) and top-ups are closed until it completes.</Notice>
        ) : !d.topups.offered ? (
          <>
            <h2>Top up</h2>
            <Notice kind="warn">{UNAVAILABLE}</Notice>
          </>
        ) : (
          <>
            <h2>Top up</h2>
            <form method="post" action="/console/credit/top-ups">
              <Csrf value={c.get("csrf")} />
              <fieldset aria-describedby={amountError ? "amount-error" : undefined}>
                <legend>Amount</legend>
                {TOPUP_AMOUNTS_KRW.map((a, i) => (
                  <div>
                    <input type="radio" id={`amount-${a}`} name="amountKrw" value={String(a)} checked={i === 0} />{" "}
                    <label for={`amount-${a}`}>{krw(a)}</label>
                  </div>
                ))}
                {amountError ? <p class="error" id="amount-error" role="alert">{amountError}</p> : null}
              </fieldset>
              <button type="submit">Continue</button>
            </form>
          </>
        )}
        {topups.length > 0 ? (
          <>
            <h2>Recent top-ups</h2>
            <ScrollRegion label="Recent top-ups">
              <table>
                <thead><tr><th scope="col">Started</th><th scope="col">Amount</th><th scope="col">Provider</th><th scope="col">State</th></tr></thead>
                <tbody>
                  {topups.map((t) => (
                    <tr>
                      <td>{when(t.createdAt)}</td><td>{krw(t.amountKrw)}</td><td>{t.provider}</td>
                      <td>{t.state === "pending" ? <a href={`/console/credit/top-ups/${t.topupId}`}>pending: pay</a> : t.state}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          </>
        ) : null}
        {!org.refundPending ? (
          <>
            <h2>Refund</h2>
            <form method="post" action="/console/credit/refund">
              <Csrf value={c.get("csrf")} />
              <p>Ask for the money you paid in and have not used back. Credit you did not pay for (granted, or from a test payment) is not paid out. While the refund is processed, paid calls are refused.</p>
              <div class="field">
                <input type="checkbox" id="f-confirm" name="confirm" value="yes" required />{" "}
                <label for="f-confirm">I understand that paid calls stop until the refund completes</label>
              </div>
              <button type="submit" class="secondary">Request a refund</button>
            </form>
          </>
        ) : null}
      </>,
      amountError ? 400 : 200,
    );
  }

  app.get("/console/credit", (c) => creditPage(c));

  app.post("/console/credit/top-ups", async (c) => {
    if (!d.topups.offered) return errorPage(c, 503, "Top-up unavailable", UNAVAILABLE);
    const s = c.get("session")!;
    const amount = Number((await formOf(c)).amountKrw ?? "");
    const r = await d.topups.start(s.orgId, amount, { returnUrl: (id) => `${topupPage(id)}?returned=1`, cancelUrl: () => `${baseUrl(d)}/console/credit?done=cancelled` });
    if (!r.ok) {
      if (r.code === "refund_pending") return errorPage(c, 409, "Top-up closed", r.title ?? "A refund is being processed.");
      if (r.code === "rate_limited") return errorPage(c, 429, "Too many open top-ups", r.title ?? "Pay an open top-up, or open another later.");
      if (r.code === "upstream_error" || r.code === "conflict" || r.code === "service_unavailable") {
        return errorPage(c, 503, "Top-up unavailable", "The payment provider could not open a payment. Nothing was charged; try again in a minute.");
      }
      return creditPage(c, r.title);
    }
    return c.redirect(`/console/credit/top-ups/${r.topupId}`, 303);
  });

  app.get("/console/credit/top-ups/:topupId", async (c) => {
    const t = await d.topups.get(c.get("session")!.orgId, c.req.param("topupId"));
    if (!t) return notFound(c);
    if (t.state === "confirmed") return c.redirect("/console/credit?done=topup", 303);
    if (t.state !== "pending") return c.redirect("/console/credit", 303);
    return page(c, "Pay for a top-up", t.provider === "sandbox" ? <SandboxPay c={c} t={t} /> : <ProviderPay t={t} returned={c.req.query("returned") !== undefined} />);
  });

  app.post("/console/credit/top-ups/:topupId/confirm", async (c) => {
    const r = await d.topups.confirmSandbox(c.get("session")!.orgId, c.req.param("topupId"));
    if (!r.ok) return r.code === "not_found" ? notFound(c) : errorPage(c, 409, "Top-up not completed", r.title ?? "The payment did not go through.");
    return c.redirect("/console/credit?done=topup", 303);
  });

  app.post("/console/credit/refund", async (c) => {
    if ((await formOf(c)).confirm !== "yes") return creditPage(c);
    await d.accounts.updateOrg(c.get("session")!.orgId, { refundPending: true });
    return c.redirect("/console/credit?done=refund", 303);
  });
}

/** The sandbox's own confirm step (outside production only): no provider page, no money. */
function SandboxPay({ c, t }: { c: Ctx; t: Topup }) {
  return (
    <form method="post" action={`/console/credit/top-ups/${t.topupId}/confirm`}>
      <Csrf value={c.get("csrf")} />
      <p>Pay <strong data-testid="topup-amount">{krw(t.amountKrw)}</strong> through the <strong>sandbox</strong> provider?</p>
      <p class="hint">Sandbox: no money is taken, and what it adds is never paid back as money.</p>
      <div class="actions">
        <button type="submit">Pay {krw(t.amountKrw)}</button>
        <a class="button secondary" href="/console/credit">Cancel</a>
      </div>
    </form>
  );
}

/**
 * A real provider: the customer pays on its page (a link: a page of another site is
 * navigated to, never posted to). The credit comes with the provider's confirmation,
 * which may arrive a moment after the customer is back here.
 */
function ProviderPay({ t, returned }: { t: Topup; returned: boolean }) {
  return (
    <>
      {returned ? (
        <Notice kind="warn">Waiting for the payment provider to confirm your payment. The credit appears as soon as it does; reload this page in a moment.</Notice>
      ) : null}
      <p>Top-up of <strong data-testid="topup-amount">{krw(t.amountKrw)}</strong>, paid on the provider's secure page.</p>
      <div class="actions">
        {t.payUrl ? <a class="button" href={t.payUrl} rel="noreferrer">Pay {krw(t.amountKrw)}</a> : null}
        <a class="button secondary" href="/console/credit">Back to credit</a>
      </div>
    </>
  );
}
