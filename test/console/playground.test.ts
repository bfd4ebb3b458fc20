// The per-app playground through HTTP: the console sends the image through the gateway
// as the app's test key (preview, free, counted, logged with its request ID), shows
// every refusal in the spec's envelope, keeps other organizations out and never puts a
// key in an answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_BODY_BYTES } from "../../src/http/read-body.ts";
import { TEST_CALLS_PER_PERIOD } from "../../src/billing/test-quota.ts";
import { fixture, makeHarness, type Harness } from "../support/harness.ts";
import { keysIn } from "../support/key-scan.ts";
import { createAppVia, signedUp, type Client } from "./client.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** What the playground's script sends: the image and size=preview, the CSRF token in a header. */
function playgroundPost(h: Harness, c: Client, appId: string, image: Uint8Array | null, headers: Record<string, string> = {}) {
  const form = new FormData();
  if (image) form.append("image_file", new Blob([image as Uint8Array<ArrayBuffer>]), "photo.jpg");
  form.append("size", "preview");
  return h.app.request(`/console/apps/${appId}/playground`, {
    method: "POST",
    body: form,
    headers: {
      "x-forwarded-for": c.ip,
      cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join("; "),
      "x-csrf-token": c.csrf(),
      ...headers,
    },
  });
}

/** Every header and the body as text, for key scans. */
async function answerText(res: Response): Promise<string> {
  return [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n") + "\n" + (await res.clone().text());
}

const testLeft = (h: Harness, orgId: string) => h.services.testQuota.testCallsRemaining({ orgId, lifetime: false });

test("a playground image goes through the gateway as the app's test key, logged, counted and free", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const a = await signedUp(h);
    const { appId, testKey } = await createAppVia(a.client, "Playground app");
    await h.admin("PATCH", `/apps/${appId}`, { productEnabled: true });
    // A live key and credit exist too: the playground must still use the test key.
    const live = await h.admin("POST", `/apps/${appId}/keys`, { kind: "live" });
    await h.admin("POST", `/orgs/${a.orgId}/credit`, { amountKrw: 1000 });

    const page = await a.client.get(`/console/apps/${appId}/playground`);
    assert.equal(page.status, 200);
    assert.match(page.html, /Playground: Playground app/);
    assert.match(page.html, /src="\/console\/static\/playground.js"/);
    assert.match(page.html, /X-Api-Key: \$PIXELDROP_TEST_KEY/, "curl snippet with the key placeholder");
    assert.match(page.html, /createClient\(\{ apiKey: process\.env\.PIXELDROP_TEST_KEY!/, "client snippet with the key placeholder");
    assert.deepEqual(keysIn(page.html), [], "no key text on the page");
    assert.ok(!page.html.includes(testKey.slice(8, 20)));
    assert.equal((await a.client.get(`/console/apps/${appId}`)).html.includes(`/console/apps/${appId}/playground`), true, "linked from the app page");

    const res = await playgroundPost(h, a.client, appId, fixture("images/jpeg-baseline.jpg"));
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("x-pd-test-size"), "preview");
    assert.equal(res.headers.get("x-pd-test-remaining"), String(TEST_CALLS_PER_PERIOD - 1));
    assert.equal(res.headers.get("x-pd-charged-krw"), null, "a test call carries no charge");
    assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/, "the security headers of an answer that is not a page");
    assert.equal(res.headers.get("cache-control"), "no-store", "the console's");
    const requestId = res.headers.get("x-pd-request-id")!;
    assert.match(requestId, /^req_/);
    assert.deepEqual(keysIn(await answerText(res)), [], "no key in the answer");
    const png = new Uint8Array(await res.arrayBuffer());
    assert.deepEqual([...png.subarray(0, 8)], PNG_SIGNATURE);

    const row = await h.services.requestLog.getRequest(requestId);
    assert.ok(row, "request-log row under the answer's request ID");
    const testKeyId = (await h.services.keys.listKeys(appId)).find((k) => k.kind === "test")!.keyId;
    assert.equal(row.keyKind, "test");
    assert.equal(row.keyId, testKeyId);
    assert.equal(row.appId, appId);
    assert.equal(row.status, 200);
    assert.equal(row.tier, "preview");
    assert.equal(row.chargedKrw, 0);
    assert.equal(await testLeft(h, a.orgId), TEST_CALLS_PER_PERIOD - 1);
    assert.equal((await h.services.billing.balances(a.orgId))!.balanceKrw, 1000, "nothing charged");
    assert.equal((await h.services.keys.getKey(live.json.keyId as string))!.lastUsedAt, null, "live key untouched");

    // The usage page lists it.
    const usage = await a.client.get("/console/usage");
    assert.ok(usage.html.includes(requestId));
  } finally {
    await h.close();
  }
});

test("playground refusals come back in the spec's envelope with a request ID and cost no test call", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const a = await signedUp(h);
    const { appId } = await createAppVia(a.client);
    await a.client.get(`/console/apps/${appId}/playground`);

    // Product not enabled yet: the page says so, and the gateway refuses.
    assert.match((await a.client.get(`/console/apps/${appId}/playground`)).html, /not enabled for this app yet/);
    const off = await playgroundPost(h, a.client, appId, fixture("images/png-rgb.png"));
    assert.equal(off.status, 403);
    assert.equal(((await off.json()) as any).errors[0].code, "product_not_enabled");
    await h.admin("PATCH", `/apps/${appId}`, { productEnabled: true });

    const expect = async (res: Response, status: number, code: string) => {
      assert.equal(res.status, status, await res.clone().text());
      const body = (await res.json()) as { errors: { code: string; title: string }[] };
      assert.equal(body.errors[0].code, code);
      assert.ok(body.errors[0].title.length > 0);
      const id = res.headers.get("x-pd-request-id")!;
      assert.match(id, /^req_/);
      const row = await h.services.requestLog.getRequest(id);
      assert.equal(row?.errorCode, code, `${code} logged under ${id}`);
      assert.equal(row?.keyKind, "test");
    };

    // Not an image.
    await expect(await playgroundPost(h, a.client, appId, new TextEncoder().encode("just some text, not a picture")), 400, "invalid_parameter");
    // Over 12 MB (the gateway's own limit, refused by the announced length).
    await expect(await playgroundPost(h, a.client, appId, new Uint8Array(MAX_BODY_BYTES + 1)), 413, "file_too_large");
    assert.equal(await testLeft(h, a.orgId), TEST_CALLS_PER_PERIOD, "errors are free");

    // Quota used up.
    for (let i = 0; i < TEST_CALLS_PER_PERIOD; i++) await h.services.testQuota.consumeTestCall({ orgId: a.orgId, lifetime: false });
    const out = await playgroundPost(h, a.client, appId, fixture("images/png-rgb.png"));
    assert.equal(out.headers.get("x-pd-test-remaining"), "0");
    assert.ok(Number(out.headers.get("retry-after")) > 0);
    await expect(out, 429, "test_quota_exceeded");
  } finally {
    await h.close();
  }
});

test("the playground needs the CSRF token and a session; a plain form post is refused", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const a = await signedUp(h);
    const { appId } = await createAppVia(a.client);
    await h.admin("PATCH", `/apps/${appId}`, { productEnabled: true });
    await a.client.get(`/console/apps/${appId}/playground`);
    const image = fixture("images/png-rgb.png");

    const wrong = await playgroundPost(h, a.client, appId, image, { "x-csrf-token": "x".repeat(32) });
    assert.equal(wrong.status, 403);
    const crossSite = await playgroundPost(h, a.client, appId, image, { origin: "https://evil.example" });
    assert.equal(crossSite.status, 403);
    const signedOut = await playgroundPost(h, a.client, appId, image, { cookie: "" });
    assert.equal(signedOut.status, 403, "no session: the anonymous token does not match");
    // The multipart form itself carrying _csrf (no script): refused, not half-sent. Read
    // as a console form, the image is past the forms' 32 KiB: 413 before anything else.
    const form = new FormData();
    form.append("_csrf", a.client.csrf());
    form.append("image_file", new Blob([image as Uint8Array<ArrayBuffer>]), "p.png");
    const plain = await h.app.request(`/console/apps/${appId}/playground`, {
      method: "POST",
      body: form,
      headers: { "x-forwarded-for": a.client.ip, cookie: [...a.client.jar].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    assert.equal(plain.status, 413);
    // A small one (no image) is read and still not passed on.
    const small = new FormData();
    small.append("_csrf", a.client.csrf());
    small.append("size", "preview");
    const smallPost = await h.app.request(`/console/apps/${appId}/playground`, {
      method: "POST",
      body: small,
      headers: { "x-forwarded-for": a.client.ip, cookie: [...a.client.jar].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    assert.equal(smallPost.status, 400);
    assert.equal(await testLeft(h, a.orgId), TEST_CALLS_PER_PERIOD, "nothing was counted");
    const rows = await h.services.requestLog.listRequests({ orgId: a.orgId, limit: 10 });
    assert.equal(rows.length, 0, "no call reached the gateway");
  } finally {
    await h.close();
  }
});

test("another organization cannot use an app's playground, and no answer carries a key", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const a = await signedUp(h);
    const b = await signedUp(h);
    const { appId, testKey } = await createAppVia(a.client, "Owned by A");
    await h.admin("PATCH", `/apps/${appId}`, { productEnabled: true });
    const live = await h.admin("POST", `/apps/${appId}/keys`, { kind: "live" });
    const keys = [testKey, live.json.key as string];
    const image = fixture("images/png-rgb.png");

    const page = await b.client.get(`/console/apps/${appId}/playground`);
    assert.equal(page.status, 404);
    assert.ok(!page.html.includes("Owned by A"));
    const post = await playgroundPost(h, b.client, appId, image);
    assert.equal(post.status, 404);
    const text = await answerText(post);
    assert.deepEqual(keysIn(text), []);
    for (const k of keys) assert.ok(!text.includes(k.slice(8, 20)));
    assert.equal(await testLeft(h, a.orgId), TEST_CALLS_PER_PERIOD, "A's test calls untouched");
    assert.equal(await testLeft(h, b.orgId), TEST_CALLS_PER_PERIOD, "B's too");
    assert.equal((await h.services.requestLog.listRequests({ orgId: a.orgId, limit: 10 })).length, 0);

    // A deleted app is gone for its own organization too.
    const mine = await playgroundPost(h, a.client, appId, image);
    assert.equal(mine.status, 200);
    const answers = [await answerText(mine), await answerText(await playgroundPost(h, a.client, appId, new Uint8Array(10)))];
    for (const t of answers) {
      assert.deepEqual(keysIn(t), [], "no key text, not even a placeholder");
      for (const k of keys) assert.ok(!t.includes(k.slice(8, 20)));
    }
    await h.services.accounts.removeApp(appId);
    assert.equal((await playgroundPost(h, a.client, appId, image)).status, 404);
  } finally {
    await h.close();
  }
});
