// The per-app playground: choose or drop an image, and the console sends it through the
// gateway as the app's test key (preview size, free, counted against the test calls,
// a request-log row). The browser never gets key text: the page holds only the CSRF
// token, and the server makes the call by app ID (src/gateway/playground.ts).
import type { Hono } from "hono";
import { TEST_CALLS_PER_PERIOD } from "../../billing/test-quota.ts";
import { MAX_BODY_BYTES } from "../../http/read-body.ts";
import type { ConsoleDeps } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { baseUrl, errorPage, notFound, ownApp, page } from "../http.tsx";
import { Notice } from "../pages/layout.tsx";
import { PlaygroundForm, PlaygroundResult } from "../pages/playground-parts.tsx";
import { clientSnippet, curlSnippet, KEY_PLACEHOLDER_ENV } from "../pages/snippets.ts";
import { Preformatted } from "../pages/scroll-region.tsx";

export const playgroundPath = (appId: string) => `/console/apps/${appId}/playground`;

export function registerPlaygroundRoutes(app: Hono<ConsoleEnv>, d: ConsoleDeps): void {
  app.get("/console/apps/:appId/playground", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    if (!a) return notFound(c);
    const org = await d.accounts.getOrg(a.orgId);
    const lifetime = org?.testQuota === "lifetime";
    const [left, testKey] = await Promise.all([
      d.testQuota.testCallsRemaining({ orgId: a.orgId, lifetime }),
      d.keys.lookupCurrent(a.appId, "test"),
    ]);
    const base = baseUrl(d);
    return page(
      c,
      `Playground: ${a.name}`,
      <>
        <p>
          Try an image with this app's <strong>test key</strong>: free, preview size, counted against your
          organization's {TEST_CALLS_PER_PERIOD} test calls {lifetime ? "(lifetime quota)" : "a month"}:{" "}
          <strong id="pg-left" data-testid="pg-left">{left}</strong> left. Each try is in the{" "}
          <a href="/console/usage">usage page</a>'s request log.
        </p>
        {a.productEnabled ? null : (
          <Notice kind="warn">
            The product is not enabled for this app yet, so tries are refused (403 product_not_enabled) until an operator
            enables it. <a href={`/console/apps/${a.appId}#product`}>Apply for use</a>
          </Notice>
        )}
        {testKey.ok ? null : (
          <Notice kind="warn">
            This app has no usable test key ({testKey.code === "key_suspended" ? "it is suspended" : "none issued, or it was deleted"}); the
            playground answers as the API would. <a href={`/console/apps/${a.appId}#keys`}>Manage keys</a>
          </Notice>
        )}
        <PlaygroundForm action={playgroundPath(a.appId)} csrf={c.get("csrf")} maxBytes={MAX_BODY_BYTES} />
        <PlaygroundResult />

        <h2 id="snippets">The same call from your code</h2>
        <p>
          Put the app's test key in the <code>{KEY_PLACEHOLDER_ENV}</code> environment variable on your server (it is
          shown only once, when issued; reissue it on the <a href={`/console/apps/${a.appId}#keys`}>app page</a> if
          lost). With a live key and <code>size=full</code> the same call returns full resolution.
        </p>
        <Snippet id="snippet-curl" title="curl" text={curlSnippet(base)} />
        <Snippet id="snippet-ts" title="TypeScript client" text={clientSnippet(base)} />
        <p><a href={`/console/apps/${a.appId}`}>Back to the app</a></p>
        <script src="/console/static/copy.js" defer></script>
        <script src="/console/static/playground.js" defer></script>
      </>,
    );
  });

  app.post("/console/apps/:appId/playground", async (c) => {
    const a = await ownApp(d, c, c.req.param("appId"));
    if (!a) return notFound(c);
    // The CSRF token came in the header, so the body is still unread; a plain form post
    // (no script) has had its body read by the CSRF check and cannot be passed on.
    if (c.req.raw.bodyUsed) return errorPage(c, 400, "Use the playground page", "The playground sends images from its page script; reload the page and try again.");
    if (!d.playground) return errorPage(c, 503, "Playground unavailable", "The playground is not available on this server.");
    return d.playground({ appId: a.appId, requestId: c.get("requestId"), request: c.req.raw, env: c.env });
  });
}

function Snippet(p: { id: string; title: string; text: string }) {
  return (
    <>
      <h3>{p.title}</h3>
      <Preformatted label={`${p.title} snippet`} id={p.id} text={p.text} />
      <div class="actions">
        <button type="button" class="secondary" data-copy={p.id}>Copy {p.title}</button>
        <span id={`${p.id}-status`} role="status" aria-live="polite"></span>
      </div>
    </>
  );
}
