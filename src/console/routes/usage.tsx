// Usage: calls and KRW per app per KST day for 30 days (chart + table), the test calls
// left this month, and the searchable request log a customer can quote to support.
import type { Hono } from "hono";
import type { ConsoleDeps, ConsoleStores } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { page } from "../http.tsx";
import { colourFor, StackedBars, type Series } from "../pages/chart.tsx";
import { krw, when } from "../pages/layout.tsx";
import { ScrollRegion } from "../pages/scroll-region.tsx";

const DAYS = 30;
const LOG_ROWS = 100;

export function registerUsageRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps, st: ConsoleStores): void {
  app.get("/console/usage", async (c) => {
    const s = c.get("session")!;
    const q = (c.req.query("q") ?? "").trim().slice(0, 100);
    const appFilter = c.req.query("app") ?? "";
    const [org, apps, usage] = await Promise.all([d.accounts.getOrg(s.orgId), d.accounts.listApps(s.orgId), st.usage.byAppAndDay(s.orgId, DAYS)]);
    const lifetime = org?.testQuota === "lifetime";
    const testLeft = await d.testQuota.testCallsRemaining({ orgId: s.orgId, lifetime });
    const filterApp = apps.find((a) => a.appId === appFilter);
    const log = await d.requestLog.listRequests({
      orgId: s.orgId,
      appId: filterApp?.appId,
      query: q || undefined,
      limit: LOG_ROWS,
    });

    // Names for every app that appears (deleted ones too) and labels for every key.
    const names = new Map(apps.map((a) => [a.appId, a.name]));
    for (const id of new Set([...usage.rows.map((r) => r.appId), ...log.map((r) => r.appId ?? "")])) {
      if (id && !names.has(id)) names.set(id, `${(await d.accounts.getApp(id))?.name ?? id} (deleted)`);
    }
    const labels = new Map<string, string>();
    for (const id of new Set(log.map((r) => r.keyId ?? ""))) {
      if (id) labels.set(id, (await d.keys.getKey(id))?.prefix ?? "—");
    }

    const appIds = [...new Set(usage.rows.map((r) => r.appId))];
    const index = new Map(usage.days.map((day, i) => [day, i]));
    const series = (pick: "calls" | "chargedKrw"): Series[] =>
      appIds.map((id) => {
        const values = usage.days.map(() => 0);
        for (const r of usage.rows) if (r.appId === id) values[index.get(r.day)!] += r[pick];
        return { label: names.get(id) ?? id, values };
      });
    const totals = appIds.map((id) => ({
      id,
      calls: usage.rows.filter((r) => r.appId === id).reduce((t, r) => t + r.calls, 0),
      krw: usage.rows.filter((r) => r.appId === id).reduce((t, r) => t + r.chargedKrw, 0),
    }));

    return page(
      c,
      "Usage",
      <>
        <p>Test calls left {lifetime ? "(lifetime quota)" : "this month"}: <strong data-testid="test-left">{testLeft}</strong> of 50.</p>
        <h2>Last {DAYS} days (KST)</h2>
        {appIds.length === 0 ? <p>No calls in the last {DAYS} days.</p> : (
          <>
            <ul class="legend" aria-label="Apps in the charts">
              {appIds.map((id, k) => <li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" fill={colourFor(k)} /></svg>{names.get(id)}</li>)}
            </ul>
            <StackedBars id="chart-calls" title="Calls per day" days={usage.days} series={series("calls")} unit="calls" />
            <StackedBars id="chart-krw" title="KRW charged per day" days={usage.days} series={series("chargedKrw")} unit="KRW" />
            <ScrollRegion label="Totals per app">
              <table data-testid="usage-totals">
                <caption class="hint">Totals, last {DAYS} days</caption>
                <thead><tr><th scope="col">App</th><th scope="col">Calls</th><th scope="col">Charged</th></tr></thead>
                <tbody>{totals.map((t) => <tr><td>{names.get(t.id)}</td><td>{t.calls}</td><td>{krw(t.krw)}</td></tr>)}</tbody>
              </table>
            </ScrollRegion>
          </>
        )}

        <h2 id="log">Request log</h2>
        <form method="get" action="/console/usage#log" role="search">
          <div class="field">
            <label for="f-q">Request ID or error code</label>
            <input id="f-q" name="q" type="search" value={q} />
          </div>
          <div class="field">
            <label for="f-app">App</label>
            <select id="f-app" name="app">
              <option value="">All apps</option>
              {apps.map((a) => <option value={a.appId} selected={a.appId === filterApp?.appId}>{a.name}</option>)}
            </select>
          </div>
          <button type="submit">Search</button>
        </form>
        {log.length === 0 ? <p>No requests found.</p> : (
          <ScrollRegion label="Request log">
            <table data-testid="request-log">
              <caption class="hint">Newest first, at most {LOG_ROWS} rows. Times in UTC.</caption>
              <thead>
                <tr>
                  <th scope="col">Request ID</th><th scope="col">Time</th><th scope="col">App</th><th scope="col">Key</th>
                  <th scope="col">Tier</th><th scope="col">Status</th><th scope="col">Error</th><th scope="col">Charged</th><th scope="col">ms</th>
                </tr>
              </thead>
              <tbody>
                {log.map((r) => (
                  <tr>
                    <td><code>{r.requestId}</code></td>
                    <td>{when(r.receivedAt)}</td>
                    <td>{r.appId ? names.get(r.appId) ?? r.appId : "—"}</td>
                    <td><code>{r.keyId ? labels.get(r.keyId) : "—"}</code></td>
                    <td>{r.tier ?? "—"}</td>
                    <td>{r.status}</td>
                    <td>{r.errorCode ?? ""}</td>
                    <td>{krw(r.chargedKrw)}</td>
                    <td>{r.processingMs ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </>,
    );
  });
}
