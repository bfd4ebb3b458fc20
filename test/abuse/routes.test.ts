// Access across boundaries, with the routes enumerated from the built app rather than
// listed by hand, so a route added later is covered (or the test names it):
//   - every operator route (/admin/v1/*, and the internal product endpoint) answers 401
//     unauthorized with the error envelope and a request ID to no token, a wrong
//     token, a token with a different scheme, or the right token with one character
//     changed;
//   - every console route that names an object (a path parameter) answers 404 to a
//     signed-in member of another organization. test/console/cross-org.test.ts checks
//     the 13 object routes by name and that nothing changed; this file checks that the
//     list is complete.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { makeHarness, OPERATOR_TOKEN, type Harness } from "../support/harness.ts";
import { createAppVia, randomIp, signedUp } from "../console/client.ts";
import { PRODUCT_PATH } from "../../src/product/app.ts";
import { findKeyLeaks, keysIn } from "../support/key-scan.ts";

const logLines: string[] = [];
const issued: string[] = [];
let h: Harness;
before(async () => {
  // The payment sandbox (opted into, outside production) makes a top-up to probe.
  h = await makeHarness({ embedded: true, env: { TRUST_PROXY: "true", NODE_ENV: "test", PAYMENT_PROVIDER: "sandbox" }, logLines });
});
after(() => h?.close());

type Route = { method: string; path: string };

/** The app's registered routes (not middleware), without duplicates. */
function routes(prefix: (p: string) => boolean): Route[] {
  const seen = new Map<string, Route>();
  for (const r of h.app.routes) {
    if (r.method === "ALL" || !prefix(r.path)) continue;
    seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  }
  return [...seen.values()];
}

test("every operator route refuses a missing or wrong token with 401 unauthorized", async () => {
  const list = routes((p) => p.startsWith("/admin/v1/") || p === PRODUCT_PATH);
  assert.ok(list.length >= 12, `operator routes found: ${list.map((r) => `${r.method} ${r.path}`).join(", ")}`);
  assert.ok(list.some((r) => r.path === PRODUCT_PATH), "the internal product endpoint is among them");
  const changed = OPERATOR_TOKEN.slice(0, -1) + (OPERATOR_TOKEN.endsWith("9") ? "8" : "9");
  const wrong: [string, Record<string, string>][] = [
    ["no token", {}],
    ["empty bearer", { authorization: "Bearer " }],
    ["wrong token", { authorization: "Bearer not-the-token" }],
    ["one character changed", { authorization: `Bearer ${changed}` }],
    ["token as a prefix", { authorization: `Bearer ${OPERATOR_TOKEN}x` }],
    ["basic scheme", { authorization: `Basic ${btoa(`operator:${OPERATOR_TOKEN}`)}` }],
    ["token in another header", { "x-api-key": OPERATOR_TOKEN }],
  ];
  let checked = 0;
  for (const r of list) {
    const path = r.path.replace(/:([A-Za-z]+)/g, (_m, name: string) => `${name}_${"0".repeat(26)}`);
    for (const [what, headers] of wrong) {
      const res = await h.app.request(path, {
        method: r.method,
        // Each from an address of its own: wrong tokens from one address are throttled (test/admin/operator-token.test.ts).
        headers: { "content-type": "application/json", "x-forwarded-for": randomIp(), ...headers },
        body: r.method === "GET" || r.method === "HEAD" ? undefined : "{}",
      });
      const label = `${r.method} ${r.path} with ${what}`;
      assert.equal(res.status, 401, label);
      assert.match(res.headers.get("x-pd-request-id") ?? "", /^req_[0-9a-z]{26}$/, label);
      const body = (await res.json()) as { errors: { code: string; title: string }[] };
      assert.equal(body.errors[0]?.code, "unauthorized", label);
      checked++;
    }
  }
  // And the right token gets past the gate on one of them (the gate is not simply closed).
  const ok = await h.app.request("/admin/v1/product", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  assert.equal(ok.status, 200);
  console.log(`\n## Operator routes\n\n| routes | wrong-token variants | requests, all 401 |\n|---:|---:|---:|\n| ${list.length} | ${wrong.length} | ${checked} |`);
});

test("every console route naming an object is 404 to another organization", async () => {
  const a = await signedUp(h);
  const b = await signedUp(h);
  const { appId, testKey } = await createAppVia(a.client, "Owned by A");
  issued.push(testKey);
  const [key] = await h.services.keys.listKeys(appId);
  await a.client.get("/console/credit");
  const topup = await a.client.post("/console/credit/top-ups", { amountKrw: "10000" });
  const topupId = /\/top-ups\/([^/]+)$/.exec(topup.location ?? "")?.[1];
  assert.ok(topupId, `top-up started: ${topup.location}`);
  // An object of A's for every parameter name a console route uses.
  const objects: Record<string, string[]> = { appId: [appId], keyId: [key!.keyId], topupId: [topupId], kind: ["live", "test"] };

  await b.client.get("/console/apps"); // B holds a CSRF token, as a real signed-in user would
  const list = routes((p) => p.startsWith("/console/") && p.includes(":"));
  assert.ok(list.length >= 12, list.map((r) => r.path).join(", "));
  const unknown = list.flatMap((r) => [...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!)).filter((n) => !(n in objects));
  assert.deepEqual(unknown, [], "a console route has a parameter this test has no object for: add one");
  const answers: string[] = [];
  for (const r of list) {
    for (const path of expand(r.path, objects)) {
      const res = r.method === "GET" ? await b.client.raw("GET", path) : await b.client.post(path, {});
      answers.push(`${r.method} ${path} ${res.status}`);
      assert.equal(res.status, 404, `${r.method} ${path} as another organization`);
      issued.push(...keysIn(res.html));
    }
  }
  // A's own view still works, and A's app is unchanged.
  assert.equal((await a.client.get(`/console/apps/${appId}`)).status, 200);
  assert.equal((await h.services.accounts.getApp(appId))?.name, "Owned by A");
  console.log(`\n## Console cross-organization\n\n| object route patterns | requests, all 404 |\n|---:|---:|\n| ${list.length} | ${answers.length} |`);
});

/** Every concrete path for a route pattern, one per combination of the objects its parameters name. */
function expand(pattern: string, objects: Record<string, string[]>): string[] {
  const m = /:([A-Za-z]+)/.exec(pattern);
  if (!m) return [pattern];
  return objects[m[1]!]!.flatMap((v) => expand(pattern.replace(m[0], v), objects));
}

test("no key text in anything logged during the run", () => {
  assert.deepEqual(findKeyLeaks(logLines, issued), []);
});
