// Keys: issue (test after a deletion; live only for the verified owner once the
// product is enabled), reissue (old key valid 7 more days) and delete, each behind a
// confirmation page. The key text appears once, in the POST's own response. While the
// operator suspends a kind of the app's access, none of the three is offered or done
// for that kind: each answers 403 with the suspension (src/keys/service.ts).
import type { Hono } from "hono";
import type { AppView } from "../../accounts/index.ts";
import type { Failure } from "../../http/api-error.ts";
import { suspendedTitle, type KeyRecord } from "../../keys/index.ts";
import type { ConsoleDeps, ConsoleStores } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { errorPage, notFound, ownApp, page, type Ctx } from "../http.tsx";
import { KeyShown } from "../pages/key-shown.tsx";
import { Csrf, Notice, when } from "../pages/layout.tsx";

export function registerKeyRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps, _st: ConsoleStores): void {
  /** The key, if it exists, is not deleted, and its app belongs to the signed-in org. */
  async function ownKey(c: Ctx, keyId: string): Promise<{ key: KeyRecord; app: AppView } | null> {
    const key = await d.keys.getKey(keyId);
    if (!key) return null;
    const a = await ownApp(d, c, key.appId);
    if (!a) return null;
    const live = await d.keys.listKeys(a.appId); // excludes deleted keys
    return live.some((k) => k.keyId === keyId) ? { key, app: a } : null;
  }

  const suspendedPage = (c: Ctx, kind: KeyRecord["kind"]) => errorPage(c, 403, "Suspended by the operator", suspendedTitle(kind));

  /** The page a refused change answers with: the operator's suspension is 403, anything else 409. */
  const refused = (c: Ctx, r: Failure, kind: KeyRecord["kind"], title: string) =>
    r.code === "key_suspended" ? suspendedPage(c, kind) : errorPage(c, 409, title, r.title ?? "The change could not be made.");

  app.post("/console/apps/:appId/keys/:kind", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    const kind = c.req.param("kind");
    if (!a || (kind !== "test" && kind !== "live")) return notFound(c);
    if (kind === "live") {
      const s = c.get("session")!;
      const [org, user] = await Promise.all([d.accounts.getOrg(s.orgId), d.accounts.getUser(s.userId)]);
      if (org?.ownerUserId !== s.userId || !user?.verifiedAt) {
        return errorPage(c, 403, "Not allowed", "Only the organization's owner, with a verified e-mail address, can issue a live key.");
      }
      if (!a.productEnabled) {
        return errorPage(c, 409, "Product not enabled", "A live key can be issued once an operator has enabled the product for this app.");
      }
    }
    const r = await d.keys.issue(a.appId, kind);
    if (!r.ok) return refused(c, r, kind, "Key not issued");
    return page(c, `${kind === "live" ? "Live" : "Test"} key for “${a.name}”`, <KeyShown keyText={r.key} kind={kind} appId={a.appId} />);
  });

  app.get("/console/keys/:keyId/reissue", async (c) => {
    const own = await ownKey(c, c.req.param("keyId"));
    if (!own) return notFound(c);
    if (own.key.suspendedAt !== null) return suspendedPage(c, own.key.kind);
    return page(
      c,
      `Reissue ${own.key.kind} key ${own.key.label}?`,
      <form method="post" action={`/console/keys/${own.key.keyId}/reissue`}>
        <Csrf value={c.get("csrf")} />
        <Notice kind="warn">A new key is made and shown once. The current key keeps working for 7 more days, then stops: replace it everywhere before then.</Notice>
        <div class="actions">
          <button type="submit">Reissue key</button>
          <a class="button secondary" href={`/console/apps/${own.app.appId}`}>Cancel</a>
        </div>
      </form>,
    );
  });

  app.post("/console/keys/:keyId/reissue", async (c) => {
    const own = await ownKey(c, c.req.param("keyId"));
    if (!own) return notFound(c);
    const r = await d.keys.reissue(own.key.keyId);
    if (!r.ok) return refused(c, r, own.key.kind, "Key not reissued");
    return page(
      c,
      `New ${own.key.kind} key for “${own.app.name}”`,
      <KeyShown
        keyText={r.key}
        kind={own.key.kind}
        appId={own.app.appId}
        extra={<p>The old key <code>{own.key.label}</code> stays valid until <strong data-testid="old-key-end">{when(r.previousValidUntil)}</strong>.</p>}
      />,
    );
  });

  app.get("/console/keys/:keyId/delete", async (c) => {
    const own = await ownKey(c, c.req.param("keyId"));
    if (!own) return notFound(c);
    if (own.key.suspendedAt !== null) return suspendedPage(c, own.key.kind);
    return page(
      c,
      `Delete ${own.key.kind} key ${own.key.label}?`,
      <form method="post" action={`/console/keys/${own.key.keyId}/delete`}>
        <Csrf value={c.get("csrf")} />
        <Notice kind="warn">Calls with this key fail at once (401 invalid_api_key). This cannot be undone.</Notice>
        <div class="actions">
          <button type="submit" class="danger">Delete key</button>
          <a class="button secondary" href={`/console/apps/${own.app.appId}`}>Cancel</a>
        </div>
      </form>,
    );
  });

  app.post("/console/keys/:keyId/delete", async (c) => {
    const own = await ownKey(c, c.req.param("keyId"));
    if (!own) return notFound(c);
    const r = await d.keys.removeByOwner(own.key.keyId);
    if (!r.ok) return refused(c, r, own.key.kind, "Key not deleted");
    return c.redirect(`/console/apps/${own.app.appId}?done=keydeleted`, 303);
  });
}
