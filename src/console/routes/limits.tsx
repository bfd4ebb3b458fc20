// Limits: the organization's daily spending limit (ORG_DAILY_LIMIT_MAX_KRW, default 50,000)
// and a summary of each app's own limits (edited on the app page).
import type { Hono } from "hono";
import { ORG_DAILY_LIMIT_MAX_KRW, wonRange } from "../../accounts/index.ts";
import { checkLimit } from "../../accounts/validate.ts";
import { getLowBalanceThreshold, LOW_BALANCE_MAX_KRW, setLowBalanceThreshold } from "../../billing/low-balance.ts";
import type { ConsoleDeps, ConsoleStores } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { formOf, notFound, page, wonField, type Ctx } from "../http.tsx";
import { Csrf, Field, krw, Notice } from "../pages/layout.tsx";
import { ScrollRegion } from "../pages/scroll-region.tsx";

export function registerLimitRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps, _st: ConsoleStores): void {
  async function limitsPage(c: Ctx, error?: string, value?: string, low?: { error: string; value: string }) {
    const s = c.get("session")!;
    const [org, apps, threshold] = await Promise.all([d.accounts.getOrg(s.orgId), d.accounts.listApps(s.orgId), getLowBalanceThreshold(d.db, s.orgId)]);
    if (!org) return notFound(c);
    return page(
      c,
      "Limits",
      <>
        {c.req.query("done") ? <Notice kind="ok">Saved.</Notice> : null}
        <form method="post" action="/console/limits">
          <Csrf value={c.get("csrf")} />
          <Field
            name="dailyLimitKrw"
            label="Organization daily spending limit (KRW)"
            inputmode="numeric"
            required
            hint={`${wonRange(ORG_DAILY_LIMIT_MAX_KRW)}. Calls beyond it are refused with 429 daily_limit_reached until 00:00 KST.`}
            value={value ?? String(org.dailyLimitKrw)}
            error={error}
          />
          <button type="submit">Save</button>
        </form>
        <h2>Low-balance e-mail</h2>
        <form method="post" action="/console/limits/low-balance">
          <Csrf value={c.get("csrf")} />
          <Field
            name="lowBalanceKrw"
            label="E-mail me when the balance falls below (KRW)"
            inputmode="numeric"
            hint="One e-mail when a charge takes the balance below this amount, and no other until a top-up lifts it back. Leave empty to turn it off."
            value={low?.value ?? (threshold === null ? "" : String(threshold))}
            error={low?.error}
          />
          <button type="submit">Save</button>
        </form>
        <h2>App limits</h2>
        {apps.length === 0 ? <p>No apps.</p> : (
          <ScrollRegion label="App limits">
            <table>
              <thead><tr><th scope="col">App</th><th scope="col">Daily</th><th scope="col">Monthly</th></tr></thead>
              <tbody>
                {apps.map((a) => (
                  <tr>
                    <td><a href={`/console/apps/${a.appId}#settings`}>{a.name}</a></td>
                    <td>{a.dailyLimitKrw === null ? "none" : krw(a.dailyLimitKrw)}</td>
                    <td>{a.monthlyLimitKrw === null ? "none" : krw(a.monthlyLimitKrw)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </>,
      error || low ? 400 : 200,
    );
  }

  app.get("/console/limits", (c) => limitsPage(c));

  app.post("/console/limits", async (c) => {
    const raw = (await formOf(c)).dailyLimitKrw ?? "";
    const v = wonField(raw);
    const bad = v === null || Number.isNaN(v) ? `Enter a whole number of won from ${wonRange(ORG_DAILY_LIMIT_MAX_KRW)}` : checkLimit(v, ORG_DAILY_LIMIT_MAX_KRW, "Daily limit");
    if (bad) return limitsPage(c, bad, raw);
    const r = await d.accounts.updateOrg(c.get("session")!.orgId, { dailyLimitKrw: v! });
    if (!r.ok) return limitsPage(c, r.title, raw);
    return c.redirect("/console/limits?done=1", 303);
  });

  app.post("/console/limits/low-balance", async (c) => {
    const raw = (await formOf(c)).lowBalanceKrw ?? "";
    const v = wonField(raw);
    if (v !== null && (Number.isNaN(v) || v > LOW_BALANCE_MAX_KRW)) {
      return limitsPage(c, undefined, undefined, { error: `Enter a whole number of won from 0 to ${LOW_BALANCE_MAX_KRW.toLocaleString("en")}, or leave it empty`, value: raw });
    }
    await setLowBalanceThreshold(d.db, c.get("session")!.orgId, v);
    return c.redirect("/console/limits?done=1", 303);
  });
}
