// Console security: CSRF on every form, one-time links (single use, expiry with an
// injected clock), session cookie flags, sign-in required, mail rate limits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { listOutbox } from "../../src/mail/index.ts";
import { makeHarness } from "../support/harness.ts";
import { createAppVia, createClient, lastLinkToken, signedUp, uniqueEmail } from "./client.ts";

test("a POST without the session's CSRF token is refused and changes nothing", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { client: c, orgId } = await signedUp(h);
    await c.get("/console/apps");
    for (const token of [undefined, "", "x".repeat(32), c.csrf().slice(0, 31)]) {
      const form: Record<string, string> = { name: "forged" };
      if (token !== undefined) form._csrf = token;
      const r = await c.raw("POST", "/console/apps", form);
      assert.equal(r.status, 403, `token ${JSON.stringify(token)}`);
    }
    const limits = await c.raw("POST", "/console/limits", { dailyLimitKrw: "0" });
    assert.equal(limits.status, 403);
    assert.equal((await h.services.accounts.listApps(orgId)).length, 0);
    assert.equal((await h.services.accounts.getOrg(orgId))!.dailyLimitKrw, 50_000);
    // The right token from another origin is refused too.
    await c.get("/console/apps");
    const cross = await c.post("/console/apps", { name: "x" }, { origin: "https://evil.example" });
    assert.equal(cross.status, 403);
    // And with the token, from our own page, it works.
    await c.get("/console/apps");
    assert.equal((await c.post("/console/apps", { name: "real" })).status, 200);
  } finally {
    await h.close();
  }
});

test("sign-up and sign-in forms need the pre-session CSRF cookie", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const c = createClient(h);
    const email = uniqueEmail();
    const bare = await c.raw("POST", "/console/sign-up", { email, _csrf: "a".repeat(32) });
    assert.equal(bare.status, 403);
    assert.equal(await lastLinkToken(h, email), null);
    await c.get("/console/sign-up");
    assert.equal((await c.post("/console/sign-up", { email })).status, 200);
  } finally {
    await h.close();
  }
});

test("one-time links work once and expire after 30 minutes", async () => {
  let t = Date.parse("2031-03-01T00:00:00Z");
  const h = await makeHarness({ env: { TRUST_PROXY: "true" }, now: () => t });
  try {
    const email = uniqueEmail("once");
    const c = createClient(h);
    await c.get("/console/sign-up");
    await c.post("/console/sign-up", { email });
    const token = (await lastLinkToken(h, email))!;
    await c.get(`/console/auth/link?token=${token}`);
    assert.equal((await c.post("/console/auth/link", { token })).status, 303);
    const again = createClient(h);
    assert.equal((await again.get(`/console/auth/link?token=${token}`)).status, 404, "a used link's page says so");
    await again.get("/console/sign-in");
    assert.equal((await again.post("/console/auth/link", { token })).status, 404, "second use refused");

    // Sign-in link, used after 31 minutes: expired.
    const s = createClient(h);
    await s.get("/console/sign-in");
    await s.post("/console/sign-in", { email });
    const late = (await lastLinkToken(h, email))!;
    assert.notEqual(late, token);
    t += 31 * 60 * 1000;
    await s.get(`/console/auth/link?token=${late}`);
    assert.equal((await s.post("/console/auth/link", { token: late })).status, 404);
    assert.equal((await s.get("/console/apps")).location, null);
    assert.match((await s.get("/console/apps")).html, /Sign in/);

    // A fresh one inside the window works.
    await s.get("/console/sign-in");
    await s.post("/console/sign-in", { email });
    const fresh = (await lastLinkToken(h, email))!;
    t += 29 * 60 * 1000;
    await s.get(`/console/auth/link?token=${fresh}`);
    assert.equal((await s.post("/console/auth/link", { token: fresh })).status, 303);
    // Garbage tokens fail the same way.
    await s.get(`/console/auth/link?token=nope`);
    assert.equal((await s.post("/console/auth/link", { token: "nope" })).status, 404);
  } finally {
    await h.close();
  }
});

test("a mailed link's page names the address it signs in as, and warns a browser signed in as someone else", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    // Someone asks for a link to their own account and sends it to a signed-in victim.
    const { email: theirs } = await signedUp(h, uniqueEmail("sender"));
    const { client: victim, email: mine } = await signedUp(h, uniqueEmail("victim"));
    const asker = createClient(h);
    await asker.get("/console/sign-in");
    await asker.post("/console/sign-in", { email: theirs });
    const token = (await lastLinkToken(h, theirs))!;
    const shown = await victim.get(`/console/auth/link?token=${token}`);
    assert.equal(shown.status, 200);
    assert.match(shown.html, new RegExp(`data-testid="link-email">${theirs}<`));
    assert.match(shown.html, new RegExp(`signed in as ${mine}`));
    // Looking does not use the link; a link that cannot be used says so at once.
    assert.equal((await asker.get(`/console/auth/link?token=${token}`)).status, 200);
    assert.doesNotMatch((await asker.get(`/console/auth/link?token=${token}`)).html, /This browser is signed in/);
    assert.equal((await asker.post("/console/auth/link", { token })).status, 303);
    assert.equal((await victim.get(`/console/auth/link?token=${token}`)).status, 404);
  } finally {
    await h.close();
  }
});

test("session cookie is __Host-, HttpOnly, SameSite=Lax and Secure behind TLS; sign-out ends it", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true", PUBLIC_URL: "https://console.example" } });
  try {
    const email = uniqueEmail();
    const c = createClient(h);
    const first = await c.get("/console/sign-up");
    const anon = first.res.headers.getSetCookie().find((l) => l.startsWith("__Host-pd_csrf="));
    assert.ok(anon, "the pre-session CSRF cookie is prefixed too");
    assert.match(anon, /; Path=\/(;|$)/);
    assert.match(anon, /Secure/i);
    await c.post("/console/sign-up", { email });
    const token = (await lastLinkToken(h, email))!;
    await c.get(`/console/auth/link?token=${token}`);
    const r = await c.post("/console/auth/link", { token });
    const cookie = r.res.headers.getSetCookie().find((l) => l.startsWith("__Host-pd_session="))!;
    assert.ok(cookie, r.res.headers.getSetCookie().join(" | "));
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.match(cookie, /Secure/i);
    assert.match(cookie, /; Path=\/(;|$)/);
    assert.doesNotMatch(cookie, /Domain=/i, "__Host- cookies carry no Domain");
    assert.match(cookie, /Max-Age=43200/, "12 hours, the session's absolute limit");
    assert.match(r.res.headers.get("referrer-policy") ?? "", /no-referrer/);
    assert.equal((await c.get("/console/apps")).status, 200);
    // The same value under the unprefixed name (as a plain-http page or a subdomain could
    // plant it) is not read over https.
    const value = c.jar.get("__Host-pd_session")!;
    const planted = await h.app.request("/console/apps", { headers: { cookie: `pd_session=${value}`, "x-forwarded-for": c.ip } });
    assert.equal(planted.status, 303);
    await c.post("/console/sign-out");
    const after = await c.raw("GET", "/console/apps");
    assert.equal(after.status, 303);
    assert.equal(after.location, "/console/sign-in");
  } finally {
    await h.close();
  }
  const plain = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { client } = await signedUp(plain);
    await client.get("/console/apps");
    // Over plain HTTP (local development) the cookie cannot be Secure or it would never
    // come back, and a __Host- name requires Secure: plain name, not Secure.
    assert.ok(client.jar.has("pd_session"));
    assert.ok(!client.jar.has("__Host-pd_session"));
  } finally {
    await plain.close();
  }
});

test("every console page except the public ones needs a session", async () => {
  // Development on loopback: the developer mailbox is one of the public pages.
  const h = await makeHarness({ env: { TRUST_PROXY: "true", NODE_ENV: "development" } });
  try {
    const c = createClient(h);
    for (const path of ["/console", "/console/apps", "/console/credit", "/console/limits", "/console/usage", "/console/apps/app_x"]) {
      const r = await c.raw("GET", path);
      assert.equal(r.status, 303, path);
      assert.equal(r.location, "/console/sign-in");
    }
    for (const path of ["/", "/console/sign-up", "/console/sign-in", "/console/docs", "/console/dev/mailbox"]) {
      assert.equal((await c.raw("GET", path)).status, 200, path);
    }
  } finally {
    await h.close();
  }
});

test("in production: no developer mailbox, and a link mailed without PUBLIC_URL names the default, not the Host", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true", NODE_ENV: "production" } });
  try {
    assert.equal((await createClient(h).raw("GET", "/console/dev/mailbox")).status, 404);
    const c = createClient(h);
    await c.get("/console/sign-in");
    const { email } = await signedUp(h);
    assert.equal((await c.post("/console/sign-in", { email }, { host: "evil.example" })).status, 200);
    const [mail] = await listOutbox(h.services.db, { to: email, limit: 1 });
    assert.match(mail!.text, /http:\/\/localhost:8080\/console\/auth\/link\?token=/);
  } finally {
    await h.close();
  }
});

test("sign-up mails are rate-limited per e-mail address and, for sign-ups, per client address", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    // Per address: 5 an hour, whichever IP asks.
    const email = uniqueEmail("rate");
    for (let i = 0; i < 5; i++) {
      const c = createClient(h);
      await c.get("/console/sign-up");
      assert.equal((await c.post("/console/sign-up", { email })).status, 200, `mail ${i + 1}`);
    }
    const sixth = createClient(h);
    await sixth.get("/console/sign-in");
    const refused = await sixth.post("/console/sign-in", { email });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.res.headers.get("retry-after")) > 0);
    // Another case of the same address shares its limit; a letter beyond ASCII, which the
    // database's lower() may fold onto an ASCII one ("İ" onto "i") while JavaScript does
    // not, would make a spelling with a limit of its own: such an address is refused.
    assert.equal((await sixth.post("/console/sign-in", { email: email.toUpperCase() })).status, 429);
    assert.equal((await sixth.post("/console/sign-in", { email: `İ${email}` })).status, 400);
    assert.equal((await sixth.post("/console/sign-up", { email: `İ${email}` })).status, 400);

    // Sign-ups per client address: 20 an hour, whichever e-mail addresses.
    const one = createClient(h);
    await one.get("/console/sign-up");
    for (let i = 0; i < 20; i++) assert.equal((await one.post("/console/sign-up", { email: uniqueEmail("ip") })).status, 200);
    const over = uniqueEmail("ip");
    assert.equal((await one.post("/console/sign-up", { email: over })).status, 429);
    assert.equal(await lastLinkToken(h, over), null, "no mail when refused");
  } finally {
    await h.close();
  }
});

test("one mailbox, one count: a trailing dot, quotes, a +tag or capitals share the address's limit; address literals are refused; mail goes to the address as typed", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const base = `victim-${crypto.randomUUID()}`;
    const email = `${base}@example.com`;
    const mailsTo = async (part: string) => {
      await h.mailSent();
      const rows = await h.services.db.query<{ to_address: string }>("SELECT to_address FROM mail_outbox WHERE strpos(lower(to_address), $1) > 0", [part.toLowerCase()]);
      return rows.map((r) => r.to_address);
    };
    for (let i = 0; i < 5; i++) {
      const c = createClient(h);
      await c.get("/console/sign-up");
      assert.equal((await c.post("/console/sign-up", { email })).status, 200, `mail ${i + 1}`);
    }
    assert.equal((await mailsTo(base)).length, 5);
    const c = createClient(h);
    await c.get("/console/sign-up");
    for (const spelling of [`${email}.`, `"${base}"@example.com`, `${base}+1@example.com`, `"${base}+x"@EXAMPLE.com.`, `${base.toUpperCase()}@Example.Com`, `"\\${base}"@example.com`]) {
      assert.equal((await c.post("/console/sign-up", { email: spelling })).status, 429, spelling);
      assert.equal((await c.post("/console/sign-in", { email: spelling })).status, 429, spelling);
    }
    for (const other of [`${base}@[203.0.113.9]`, `${base}@[IPv6:2001:db8::1]`, `${base}@203.0.113.9`, `${base}(x)@example.com`, `${base}@example.com(x)`, `"${base} x"@example.com`, `${base}@exa_mple.com`]) {
      assert.equal((await c.post("/console/sign-up", { email: other })).status, 400, other);
    }
    assert.equal((await mailsTo(base)).length, 5, "none of them was mailed");

    // A +tag is counted with its base but mailed as typed.
    const typed = `Other-${base}+News@Example.com.`;
    assert.equal((await c.post("/console/sign-up", { email: typed })).status, 200);
    assert.deepEqual(await mailsTo(`other-${base}`), [typed]);
  } finally {
    await h.close();
  }
});

test("validation errors are shown next to the field", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { client: c, orgId } = await signedUp(h);
    await c.get("/console/limits");
    const bad = await c.post("/console/limits", { dailyLimitKrw: "1000001" });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /id="f-dailyLimitKrw"[^>]*aria-invalid="true"/);
    assert.match(bad.html, /id="f-dailyLimitKrw-error"[^>]*>Daily limit must be/);
    assert.equal((await h.services.accounts.getOrg(orgId))!.dailyLimitKrw, 50_000);
    assert.equal((await c.post("/console/limits", { dailyLimitKrw: "abc" })).status, 400);
    assert.equal((await c.post("/console/limits", { dailyLimitKrw: "1,000,000" })).status, 303);
    assert.equal((await h.services.accounts.getOrg(orgId))!.dailyLimitKrw, 1_000_000);

    const { appId } = await createAppVia(c);
    await c.get(`/console/apps/${appId}`);
    const appBad = await c.post(`/console/apps/${appId}/settings`, { name: "", dailyLimitKrw: "5", monthlyLimitKrw: "-3" });
    assert.equal(appBad.status, 400);
    assert.match(appBad.html, /id="f-name-error"/);
    assert.match(appBad.html, /id="f-monthlyLimitKrw-error"/);
    assert.doesNotMatch(appBad.html, /id="f-dailyLimitKrw-error"/);
    assert.equal((await h.services.accounts.getApp(appId))!.dailyLimitKrw, null, "nothing saved");
    await c.get(`/console/apps/${appId}`);
    assert.equal((await c.post(`/console/apps/${appId}/settings`, { name: "Renamed", dailyLimitKrw: "5000", monthlyLimitKrw: "" })).status, 303);
    const a = (await h.services.accounts.getApp(appId))!;
    assert.equal(a.name, "Renamed");
    assert.equal(a.dailyLimitKrw, 5000);
    assert.equal(a.monthlyLimitKrw, null);
  } finally {
    await h.close();
  }
});
