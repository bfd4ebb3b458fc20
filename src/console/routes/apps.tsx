// Apps: list and create (the test key is issued with the app and shown once), the
// app page (state, product and "apply for use", rename, limits, keys), delete.
import type { Hono } from "hono";
import { APP_DAILY_LIMIT_MAX_KRW, APP_MONTHLY_LIMIT_MAX_KRW, wonRange, type AppView } from "../../accounts/index.ts";
import { checkAppName, checkLimit } from "../../accounts/validate.ts";
import { appState, PRODUCTS, type AppState, type ProductId } from "../../accounts/index.ts";
import { suspendedTitle } from "../../keys/index.ts";
import type { ConsoleDeps, ConsoleStores } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { errorPage, formOf, notFound, ownApp, page, wonField, type Ctx } from "../http.tsx";
import { KeyShown } from "../pages/key-shown.tsx";
import { KeyTable } from "../pages/key-table.tsx";
import { Csrf, Field, krw, Notice, when } from "../pages/layout.tsx";
import { ScrollRegion } from "../pages/scroll-region.tsx";

const STATE_TEXT: Record<AppState, string> = {
  not_applied: "Product disabled: apply for use",
  in_review: "In review: the product is disabled until an operator enables it",
  enabled: "Enabled",
  discontinued: "Product discontinued",
};

export interface AppPageErrors {
  name?: string;
  dailyLimitKrw?: string;
  monthlyLimitKrw?: string;
  values?: Record<string, string>;
}

export function registerAppRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps, st: ConsoleStores): void {
  app.get("/console", (c) => c.redirect("/console/apps", 303));

  async function listPage(c: Ctx, nameError?: string, name?: string) {
    const s = c.get("session")!;
    const [apps, review, sale, org] = await Promise.all([
      d.accounts.listApps(s.orgId),
      st.review.infoForOrg(s.orgId),
      d.accounts.getProductStatus(),
      d.accounts.getOrg(s.orgId),
    ]);
    return page(
      c,
      "Apps",
      <>
        {c.req.query("welcome") ? <Notice kind="ok">Your address is verified and your organization is ready. Create your first app.</Notice> : null}
        {c.req.query("deleted") ? <Notice kind="ok">The app was deleted; its keys no longer work.</Notice> : null}
        {org ? <p>Balance {krw(org.balanceKrw)} · available {krw(org.availableKrw)} · <a href="/console/credit">Top up</a></p> : null}
        {apps.length === 0 ? <p>No apps yet.</p> : (
          <ScrollRegion label="Your apps">
            <table>
              <caption class="hint">Your apps</caption>
              <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {apps.map((a) => (
                  <tr>
                    <td><a href={`/console/apps/${a.appId}`}>{a.name}</a></td>
                    <td><span class="state">{STATE_TEXT[appState(a.productEnabled, review.get(a.appId)?.reviewRequestedAt ?? null, sale)]}</span></td>
                    <td>{when(a.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
        <h2>Create an app</h2>
        <form method="post" action="/console/apps">
          <Csrf value={c.get("csrf")} />
          <Field name="name" label="App name" required value={name} error={nameError} hint="1 to 100 characters, e.g. the product that will call the API." />
          <button type="submit">Create app</button>
        </form>
      </>,
      nameError ? 400 : 200,
    );
  }

  app.get("/console/apps", (c) => listPage(c));

  app.post("/console/apps", async (c) => {
    const s = c.get("session")!;
    const name = (await formOf(c)).name ?? "";
    const made = await d.accounts.createApp(s.orgId, { name });
    if (!made.ok) return listPage(c, made.title ?? "Check the name", name);
    const test = await d.keys.issue(made.appId, "test");
    if (!test.ok) return c.redirect(`/console/apps/${made.appId}`, 303);
    return page(
      c,
      `App “${made.name}” created`,
      <>
        <p>Every app has a test key (free, preview-size output, 50 calls a month) and, once the product is enabled, a live key.</p>
        <KeyShown keyText={test.key} kind="test" appId={made.appId} />
      </>,
    );
  });

  async function appPage(c: Ctx, a: AppView, errors: AppPageErrors = {}, notice?: string) {
    const s = c.get("session")!;
    const [review, sale, keys, org, suspended] = await Promise.all([
      st.review.info(a.appId),
      d.accounts.getProductStatus(),
      d.keys.listKeys(a.appId),
      d.accounts.getOrg(s.orgId),
      d.keys.suspendedKinds(a.appId),
    ]);
    const state = appState(a.productEnabled, review?.reviewRequestedAt ?? null, sale);
    const v = errors.values ?? {};
    const hasCurrent = (kind: "test" | "live") => keys.some((k) => k.kind === kind && k.replacedBy === null);
    const isOwner = org?.ownerUserId === s.userId;
    const bad = errors.name || errors.dailyLimitKrw || errors.monthlyLimitKrw;
    return page(
      c,
      a.name,
      <>
        {notice ? <Notice kind="ok">{notice}</Notice> : null}
        <p>State: <span class="state" data-testid="app-state">{STATE_TEXT[state]}</span></p>

        <h2 id="product">Product</h2>
        <form method="post" action={`/console/apps/${a.appId}/apply`}>
          <Csrf value={c.get("csrf")} />
          <div class="field">
            <label for="f-product">Product</label>
            <select id="f-product" name="product">
              {Object.entries(PRODUCTS).map(([id, label]) => (
                <option value={id} selected={review?.product === id}>{label}</option>
              ))}
            </select>
          </div>
          {state === "not_applied" ? <button type="submit">Apply for use</button> : (
            <p class="hint">{review?.reviewRequestedAt ? `Applied ${when(review.reviewRequestedAt)}.` : "Enabled by the operator."}</p>
          )}
        </form>

        <h2 id="playground">Playground</h2>
        <p><a href={`/console/apps/${a.appId}/playground`}>Try an image with this app's test key</a> (free, preview size, no key to copy).</p>

        <h2 id="keys">Keys</h2>
        {suspended.map((kind) => <Notice kind="error"><span data-testid={`suspended-${kind}`}>{suspendedTitle(kind)}</span></Notice>)}
        <KeyTable keys={keys} now={d.now()} csrf={c.get("csrf")} />
        <div class="actions">
          {!hasCurrent("test") && !suspended.includes("test") ? (
            <form method="post" action={`/console/apps/${a.appId}/keys/test`}>
              <Csrf value={c.get("csrf")} /><button type="submit">Issue test key</button>
            </form>
          ) : null}
          {!hasCurrent("live") && !suspended.includes("live") ? (
            state === "enabled" && isOwner ? (
              <form method="post" action={`/console/apps/${a.appId}/keys/live`}>
                <Csrf value={c.get("csrf")} /><button type="submit">Issue live key</button>
              </form>
            ) : (
              <p class="hint">A live key can be issued by the organization owner once the product is enabled.</p>
            )
          ) : null}
        </div>

        <h2 id="settings">Name and limits</h2>
        {bad ? <Notice kind="error">Some fields need attention.</Notice> : null}
        <form method="post" action={`/console/apps/${a.appId}/settings`}>
          <Csrf value={c.get("csrf")} />
          <Field name="name" label="App name" required value={v.name ?? a.name} error={errors.name} />
          <Field name="dailyLimitKrw" label="Daily limit (KRW)" inputmode="numeric" hint={`Optional, ${wonRange(APP_DAILY_LIMIT_MAX_KRW)}. Blank: no app limit (the organization's limit still applies).`} value={v.dailyLimitKrw ?? (a.dailyLimitKrw === null ? "" : String(a.dailyLimitKrw))} error={errors.dailyLimitKrw} />
          <Field name="monthlyLimitKrw" label="Monthly limit (KRW)" inputmode="numeric" hint={`Optional, ${wonRange(APP_MONTHLY_LIMIT_MAX_KRW)}. Blank: no limit.`} value={v.monthlyLimitKrw ?? (a.monthlyLimitKrw === null ? "" : String(a.monthlyLimitKrw))} error={errors.monthlyLimitKrw} />
          <button type="submit">Save</button>
        </form>

        <h2 id="danger">Delete</h2>
        {suspended.length > 0 ? (
          <p class="hint">An app whose keys the operator suspended cannot be deleted until the operator lifts the suspension.</p>
        ) : (
          <p><a href={`/console/apps/${a.appId}/delete`}>Delete this app…</a></p>
        )}
      </>,
      bad ? 400 : 200,
    );
  }

  app.get("/console/apps/:appId", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    if (!a) return notFound(c);
    const msg = { saved: "Saved.", applied: "Applied for use. An operator will review the app.", keydeleted: "The key was deleted." }[c.req.query("done") ?? ""];
    return appPage(c, a, {}, msg);
  });

  app.post("/console/apps/:appId/apply", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    if (!a) return notFound(c);
    const product = (await formOf(c)).product ?? "";
    if (!Object.hasOwn(PRODUCTS, product)) return errorPage(c, 400, "Unknown product", "Choose a product from the list.");
    await st.review.apply(a.appId, product as ProductId);
    return c.redirect(`/console/apps/${a.appId}?done=applied`, 303);
  });

  app.post("/console/apps/:appId/settings", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    if (!a) return notFound(c);
    const f = await formOf(c);
    const errors: AppPageErrors = { values: f };
    const daily = wonField(f.dailyLimitKrw);
    const monthly = wonField(f.monthlyLimitKrw);
    if (Number.isNaN(daily)) errors.dailyLimitKrw = "Enter a whole number of won, or leave it blank";
    if (Number.isNaN(monthly)) errors.monthlyLimitKrw = "Enter a whole number of won, or leave it blank";
    // All fields are checked before anything is saved, so a refusal saves nothing.
    const nameErr = checkAppName(f.name ?? "");
    if (nameErr) errors.name = nameErr;
    if (daily !== null && !errors.dailyLimitKrw) errors.dailyLimitKrw = checkLimit(daily, APP_DAILY_LIMIT_MAX_KRW, "Daily limit") ?? undefined;
    if (monthly !== null && !errors.monthlyLimitKrw) errors.monthlyLimitKrw = checkLimit(monthly, APP_MONTHLY_LIMIT_MAX_KRW, "Monthly limit") ?? undefined;
    if (errors.name || errors.dailyLimitKrw || errors.monthlyLimitKrw) return appPage(c, a, errors);
    const r = await d.accounts.updateApp(a.appId, { name: f.name ?? "", dailyLimitKrw: daily, monthlyLimitKrw: monthly });
    if (!r.ok) return appPage(c, a, { ...errors, name: r.title ?? "Not accepted" });
    return c.redirect(`/console/apps/${a.appId}?done=saved`, 303);
  });

  /** An app whose access the operator suspends keeps its keys, and so is not deleted (src/keys/service.ts). */
  async function suspendedApp(c: Ctx, a: AppView) {
    const kinds = await d.keys.suspendedKinds(a.appId);
    return kinds.length > 0 ? errorPage(c, 403, "Suspended by the operator", suspendedTitle(kinds[0]!)) : null;
  }

  app.get("/console/apps/:appId/delete", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    if (!a) return notFound(c);
    const held = await suspendedApp(c, a);
    if (held) return held;
    return page(
      c,
      `Delete “${a.name}”?`,
      <form method="post" action={`/console/apps/${a.appId}/delete`}>
        <Csrf value={c.get("csrf")} />
        <Notice kind="warn">Its test and live keys stop working at once. This cannot be undone.</Notice>
        <div class="actions">
          <button type="submit" class="danger">Delete app</button>
          <a class="button secondary" href={`/console/apps/${a.appId}`}>Cancel</a>
        </div>
      </form>,
    );
  });

  app.post("/console/apps/:appId/delete", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    if (!a) return notFound(c);
    const held = await suspendedApp(c, a);
    if (held) return held;
    await d.accounts.removeApp(a.appId);
    return c.redirect("/console/apps?deleted=1", 303);
  });
}
