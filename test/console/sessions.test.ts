// Console sessions end (docs/SECURITY.md, "Sign-in and sessions"): 30 minutes without
// use, 12 hours after sign-in however busy, and at once everywhere when the person asks.
// The clock is injected.
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeHarness } from "../support/harness.ts";
import { createClient, lastLinkToken, signedUp } from "./client.ts";
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from "../../src/console/sessions.ts";

const MIN = 60_000;

/** A second browser of the same person: signs in with a mailed link. */
async function signIn(h: Awaited<ReturnType<typeof makeHarness>>, email: string) {
  const c = createClient(h);
  await c.get("/console/sign-in");
  assert.equal((await c.post("/console/sign-in", { email })).status, 200);
  const token = (await lastLinkToken(h, email))!;
  await c.get(`/console/auth/link?token=${token}`);
  assert.equal((await c.post("/console/auth/link", { token })).status, 303);
  return c;
}

const signedIn = async (c: ReturnType<typeof createClient>) => (await c.raw("GET", "/console/apps")).status === 200;

test("a session ends after 30 minutes without use; each use moves that back", async () => {
  let t = Date.parse("2031-05-01T09:00:00Z");
  const h = await makeHarness({ env: { TRUST_PROXY: "true" }, now: () => t });
  try {
    assert.equal(SESSION_IDLE_MS, 30 * MIN);
    const { client: busy } = await signedUp(h);
    const { client: idle } = await signedUp(h);
    // busy uses it every 20 minutes for two hours; idle not at all.
    for (let i = 0; i < 6; i++) {
      t += 20 * MIN;
      assert.ok(await signedIn(busy), `busy, after ${(i + 1) * 20} minutes`);
    }
    assert.equal(await signedIn(idle), false, "idle for two hours: signed out");
    t += 30 * MIN - 1000;
    assert.ok(await signedIn(busy), "29:59 after the last use");
    t += 30 * MIN;
    assert.equal(await signedIn(busy), false, "30 minutes after the last use");
    const again = await busy.raw("GET", "/console/apps");
    assert.equal(again.location, "/console/sign-in");
  } finally {
    await h.close();
  }
});

test("however busy, a session ends 12 hours after sign-in", async () => {
  let t = Date.parse("2031-05-02T09:00:00Z");
  const h = await makeHarness({ env: { TRUST_PROXY: "true" }, now: () => t });
  try {
    assert.equal(SESSION_ABSOLUTE_MS, 12 * 60 * MIN);
    const { client } = await signedUp(h);
    for (let used = 0; used < 12 * 60 - 10; used += 10) {
      t += 10 * MIN;
      assert.ok(await signedIn(client), `${used + 10} minutes after sign-in`);
    }
    t += 10 * MIN;
    assert.equal(await signedIn(client), false, "12 hours after sign-in");
  } finally {
    await h.close();
  }
});

test("sign out everywhere ends every session of that person, and nobody else's", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { client: laptop, email } = await signedUp(h);
    const phone = await signIn(h, email);
    const other = (await signedUp(h)).client;
    assert.ok(await signedIn(laptop));
    assert.ok(await signedIn(phone));

    // Needs the session's CSRF token like any form.
    const forged = await phone.raw("POST", "/console/sign-out-everywhere", { _csrf: "x".repeat(32) });
    assert.equal(forged.status, 403);
    assert.ok(await signedIn(laptop));

    await phone.get("/console/apps");
    const out = await phone.post("/console/sign-out-everywhere");
    assert.equal(out.status, 303);
    assert.equal(out.location, "/");
    assert.equal(await signedIn(phone), false);
    assert.equal(await signedIn(laptop), false, "the other browser is signed out too");
    assert.ok(await signedIn(other), "another person's session is untouched");
    const page = await other.get("/console/apps");
    assert.match(page.html, /Sign out everywhere/, "offered on every signed-in page");
  } finally {
    await h.close();
  }
});

test("sign out everywhere also voids the sign-in links already mailed to that person, and nobody else's", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { client, email } = await signedUp(h);
    const other = await signedUp(h);
    // Links asked for before, still unused in the inboxes: one to this person, one to another.
    const asker = createClient(h);
    await asker.get("/console/sign-in");
    assert.equal((await asker.post("/console/sign-in", { email })).status, 200);
    const mine = (await lastLinkToken(h, email))!;
    assert.equal((await asker.post("/console/sign-in", { email: other.email })).status, 200);
    const theirs = (await lastLinkToken(h, other.email))!;

    await client.get("/console/apps");
    assert.equal((await client.post("/console/sign-out-everywhere")).status, 303);
    const holder = createClient(h);
    assert.equal((await holder.get(`/console/auth/link?token=${mine}`)).status, 404, "the link's page says it is void");
    await holder.get("/console/sign-in");
    assert.equal((await holder.post("/console/auth/link", { token: mine })).status, 404);
    assert.equal(await signedIn(holder), false);

    await holder.get(`/console/auth/link?token=${theirs}`);
    assert.equal((await holder.post("/console/auth/link", { token: theirs })).status, 303, "another person's link still signs in");
    assert.ok(await signedIn(await signIn(h, email)), "a link asked for afterwards signs in");
  } finally {
    await h.close();
  }
});
