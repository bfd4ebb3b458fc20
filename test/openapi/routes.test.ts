// The document and the app agree on which operations exist: every route the Hono app
// registers is documented, and every documented path + method is registered.
// Not API, so not in the document: the customer console (HTML pages and form posts
// under /console and the landing page at /, see docs/CONSOLE.md), and the payment
// provider's webhook (Stripe's own contract, registered only with PAYMENT_PROVIDER=stripe:
// docs/DEPLOY.md "Payments with Stripe").
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { buildOpenApiDocument } from "../../src/openapi/document.ts";
import { honoPath } from "../../src/openapi/model.ts";
import { STRIPE_WEBHOOK_PATH } from "../../src/payments/index.ts";
import { makeHarness, type Harness } from "../support/harness.ts";

let h: Harness;
before(async () => {
  h = await makeHarness({ embedded: true });
});
after(() => h.close());

const isNotApi = (path: string) => path === "/" || path === "/console" || path.startsWith("/console/") || path === STRIPE_WEBHOOK_PATH;

function documented(): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(buildOpenApiDocument().paths)) {
    for (const method of Object.keys(item)) out.add(`${method.toUpperCase()} ${honoPath(path)}`);
  }
  return out;
}

test("every route the app registers is documented (console pages excepted)", () => {
  const docs = documented();
  const docPaths = new Set([...docs].map((d) => d.split(" ")[1]));
  const undocumented: string[] = [];
  for (const r of h.app.routes) {
    if (isNotApi(r.path)) continue;
    if (r.method === "ALL") {
      // app.use middleware ("/*", "/admin/v1/*") and per-path catch-alls (the 405 on
      // /v1.0/removebg, the operator check on the internal path) answer no operation of their own.
      const wildcard = r.path.endsWith("*");
      assert.ok(wildcard || docPaths.has(r.path), `ALL ${r.path} is neither middleware nor on a documented path`);
      continue;
    }
    if (!docs.has(`${r.method} ${r.path}`)) undocumented.push(`${r.method} ${r.path}`);
  }
  assert.deepEqual(undocumented, [], "add these to src/openapi/operations-*.ts, then npm run build:docs");
});

test("every documented operation is a route of the app", () => {
  const registered = new Set(h.app.routes.map((r) => `${r.method} ${r.path}`));
  const missing = [...documented()].filter((d) => !registered.has(d));
  assert.deepEqual(missing, [], "documented but not served");
});

test("the walk sees the whole app: public, operator, health and console routes are all there", () => {
  const paths = new Set(h.app.routes.map((r) => r.path));
  for (const p of ["/v1.0/removebg", "/v1.0/account", "/healthz", "/admin/v1/orgs", "/openapi.json", "/docs/api", "/console/docs"]) {
    assert.ok(paths.has(p), `${p} registered`);
  }
});
