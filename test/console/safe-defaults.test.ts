// Safe by default (docs/SECURITY.md "Defaults"): with NODE_ENV unset the service behaves
// as in production; development is asked for and listens on loopback unless told
// otherwise; the developer mailbox (every mailed sign-in link, no login) is served only
// in development on loopback; every mailed link is built from PUBLIC_URL, never from the
// request's Host or X-Forwarded-* headers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config.ts";
import { listOutbox } from "../../src/mail/index.ts";
import { makeHarness, type Harness } from "../support/harness.ts";
import { createClient, uniqueEmail } from "./client.ts";

/** Headers an attacker sets to steer a link to a site of theirs. */
const FORGED = { host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", forwarded: "host=evil.example;proto=https" };

async function signUpMail(h: Harness): Promise<string> {
  const c = createClient(h);
  // The form fetched as the attacker's request will be made (behind a trusted proxy the
  // forged X-Forwarded-Proto decides the cookies' __Host- names).
  await c.raw("GET", "http://evil.example/console/sign-up", undefined, FORGED);
  const email = uniqueEmail("steer");
  // The URL a server builds from a forged Host header, plus the proxy headers.
  const r = await c.raw("POST", "http://evil.example/console/sign-up", { _csrf: c.csrf(), email }, FORGED);
  assert.equal(r.status, 200, r.html);
  await h.mailSent(); // the mail goes out from a queue after the answer
  const [mail] = await listOutbox(h.services.db, { to: email, limit: 1 });
  assert.ok(mail, "a sign-up mail");
  return mail.text;
}

test("NODE_ENV unset: production; HOST 0.0.0.0; PUBLIC_URL http://localhost:PORT", () => {
  const bare = parseConfig({});
  assert.equal(bare.NODE_ENV, "production");
  assert.equal(bare.HOST, "0.0.0.0");
  assert.equal(bare.PUBLIC_URL, "http://localhost:8080");
  assert.equal(parseConfig({ PORT: "9090" }).PUBLIC_URL, "http://localhost:9090");
  assert.equal(parseConfig({ PUBLIC_URL: "https://pixeldrop.example/" }).PUBLIC_URL, "https://pixeldrop.example");
});

test("development is asked for, and listens on loopback unless HOST says otherwise", () => {
  assert.equal(parseConfig({ NODE_ENV: "development" }).HOST, "127.0.0.1");
  assert.equal(parseConfig({ NODE_ENV: "development", HOST: "0.0.0.0" }).HOST, "0.0.0.0");
  assert.equal(parseConfig({ NODE_ENV: "production" }).HOST, "0.0.0.0");
});

test("PUBLIC_URL must be an http(s) address without query or fragment", () => {
  for (const bad of ["ftp://x.example", "javascript:alert(1)", "https://x.example/?x=1", "https://x.example/#top", "not a url"]) {
    assert.throws(() => parseConfig({ PUBLIC_URL: bad }), /PUBLIC_URL/, bad);
  }
});

test("/console/dev/mailbox: 404 with NODE_ENV unset, 404 in development on a public address, served in development on loopback, to loopback names only", async () => {
  const cases: [Record<string, string>, number][] = [
    [{}, 404],
    [{ NODE_ENV: "production" }, 404],
    [{ NODE_ENV: "test" }, 404],
    [{ NODE_ENV: "development", HOST: "0.0.0.0" }, 404],
    [{ NODE_ENV: "development", HOST: "::" }, 404],
    [{ NODE_ENV: "development" }, 200],
    [{ NODE_ENV: "development", HOST: "::1" }, 200],
  ];
  for (const [env, status] of cases) {
    const h = await makeHarness({ env });
    try {
      const r = await createClient(h).raw("GET", "/console/dev/mailbox");
      assert.equal(r.status, status, JSON.stringify(env));
      // Whatever mode: the mail itself is kept in the outbox (nothing is lost without SMTP).
      assert.equal(h.services.mailer.kind, "outbox");
      if (status !== 200) continue;
      // Served, but only under a loopback name: a page whose DNS name was rebound to
      // 127.0.0.1 reaches the port under its own name, and gets nothing.
      assert.equal((await createClient(h).raw("GET", "http://127.0.0.1:8080/console/dev/mailbox")).status, 200);
      assert.equal((await createClient(h).raw("GET", "http://rebound.example:8080/console/dev/mailbox")).status, 404);
    } finally {
      await h.close();
    }
  }
});

test("mailed links come from PUBLIC_URL, never from Host or X-Forwarded-* (default, development, production)", async () => {
  const cases: [Record<string, string>, string][] = [
    [{}, "http://localhost:8080/console/auth/link?token="],
    [{ NODE_ENV: "development", TRUST_PROXY: "true" }, "http://localhost:8080/console/auth/link?token="],
    [{ NODE_ENV: "production", TRUST_PROXY: "true", PUBLIC_URL: "https://console.example" }, "https://console.example/console/auth/link?token="],
  ];
  for (const [env, start] of cases) {
    const h = await makeHarness({ env });
    try {
      const text = await signUpMail(h);
      assert.ok(text.includes(start), `${JSON.stringify(env)}: ${text}`);
      assert.doesNotMatch(text, /evil\.example/);
      // Pages that show the service's address (the curl example) say the same.
      const landing = await createClient(h).raw("GET", "http://evil.example/", undefined, FORGED);
      assert.doesNotMatch(landing.html, /evil\.example/);
    } finally {
      await h.close();
    }
  }
});
