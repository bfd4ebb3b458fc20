// Sign-in that names the caller and tells nothing (docs/SECURITY.md, "Sign-in and
// sessions", "Limits that name the caller"):
// - sign-ins for other e-mail addresses from the same client address do not lock a
//   different person out; only a flood does, and only for the minute after it;
// - a sign-in runs the same statements whether or not the address has an account, and
//   the mail is written after the answer (its time is not in the answer's).
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Db } from "../../src/db/index.ts";
import type { Mailer } from "../../src/mail/index.ts";
import { DEFAULT_MAIL_LIMITS } from "../../src/console/mail-rate.ts";
import { buildApp } from "../../src/wiring/app.ts";
import { makeHarness, OPERATOR_TOKEN } from "../support/harness.ts";
import { createClient, lastLinkToken, signedUp, uniqueEmail } from "./client.ts";

test("20 sign-ins for unknown addresses from one client address do not lock out the next, different person there", async () => {
  let t = Date.parse("2031-06-01T09:00:00Z");
  const h = await makeHarness({ env: { TRUST_PROXY: "true" }, now: () => t });
  try {
    const { email: someone } = await signedUp(h);
    const office = createClient(h); // everyone behind one NAT
    await office.get("/console/sign-in");
    for (let i = 0; i < 20; i++) assert.equal((await office.post("/console/sign-in", { email: uniqueEmail("nobody") })).status, 200, `sign-in ${i + 1}`);
    const colleague = createClient(h, office.ip);
    await colleague.get("/console/sign-in");
    const mine = await colleague.post("/console/sign-in", { email: someone });
    assert.equal(mine.status, 200, `a different person at the same address: ${mine.res.headers.get("retry-after")}`);
    assert.ok(await lastLinkToken(h, someone), "and the link is mailed");
  } finally {
    await h.close();
  }
});

test("a flood from one address is braked for a minute, and its own inboxes for an hour", async () => {
  let t = Date.parse("2031-06-02T09:00:00Z");
  const h = await makeHarness({ env: { TRUST_PROXY: "true" }, now: () => t });
  try {
    const flood = createClient(h);
    await flood.get("/console/sign-in");
    const brake = DEFAULT_MAIL_LIMITS.requestsPerIp;
    for (let i = 0; i < brake.max; i++) assert.equal((await flood.post("/console/sign-in", { email: uniqueEmail("flood") })).status, 200);
    const braked = await flood.post("/console/sign-in", { email: uniqueEmail("flood") });
    assert.equal(braked.status, 429);
    const retry = Number(braked.res.headers.get("retry-after"));
    assert.ok(retry >= 1 && retry <= brake.windowMs / 1000, `Retry-After ${retry}`);
    t += brake.windowMs;
    assert.equal((await flood.post("/console/sign-in", { email: uniqueEmail("flood") })).status, 200, "back a minute later");

    // One inbox: 5 links an hour, from however many addresses.
    const target = uniqueEmail("inbox");
    for (let i = 0; i < DEFAULT_MAIL_LIMITS.perEmail.max; i++) {
      const c = createClient(h);
      await c.get("/console/sign-in");
      assert.equal((await c.post("/console/sign-in", { email: target })).status, 200);
    }
    const sixth = createClient(h);
    await sixth.get("/console/sign-in");
    assert.equal((await sixth.post("/console/sign-in", { email: target })).status, 429);
  } finally {
    await h.close();
  }
});

test("sign-in runs the same statements for a known and an unknown address, and mails after the answer", async () => {
  const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
  try {
    const { email: known } = await signedUp(h);
    // The request's statements, and whether a mail was handed over before its answer.
    let statements: string[] = [];
    let answering = false;
    let mailedWhileAnswering = 0;
    const db: Db = h.services.db;
    const query = db.query.bind(db);
    const transaction = db.transaction.bind(db);
    const record = (text: string) => {
      if (answering) statements.push(text.replace(/\s+/g, " ").trim());
    };
    const counted: Db = Object.assign(Object.create(Object.getPrototypeOf(db)) as Db, db, {
      query: ((text: string, params?: unknown[]) => (record(text), query(text, params))) as Db["query"],
      transaction: ((fn: (tx: Db) => Promise<unknown>) =>
        transaction((tx) => {
          const txQuery = tx.query.bind(tx);
          return fn(Object.assign(Object.create(Object.getPrototypeOf(tx)) as Db, tx, { query: ((text: string, params?: unknown[]) => (record(text), txQuery(text, params))) as Db["query"] }));
        })) as Db["transaction"],
    });
    const mailer: Mailer = {
      kind: h.services.mailer.kind,
      send: (m) => {
        if (answering) mailedWhileAnswering++;
        return h.services.mailer.send(m);
      },
    };
    const built = buildApp({ ...h.services, db: counted, mailer }, { operatorToken: OPERATOR_TOKEN, log: () => {}, isShuttingDown: () => false, remoteAddress: () => "127.0.0.1" });
    const client = createClient({ ...h, app: built.app });

    const signIn = async (email: string) => {
      await client.get("/console/sign-in");
      statements = [];
      answering = true;
      const r = await client.post("/console/sign-in", { email });
      answering = false;
      assert.equal(r.status, 200);
      await built.mailSent();
      return { html: r.html.replace(/value="[A-Za-z0-9]{32}"/g, ""), statements };
    };
    const forKnown = await signIn(known);
    const forUnknown = await signIn(uniqueEmail("nobody"));
    assert.ok(forKnown.statements.some((q) => /console_mail_attempts/.test(q)), `recorded: ${forKnown.statements.join(" | ")}`);
    assert.deepEqual(forUnknown.statements, forKnown.statements, "the same work whether or not the address has an account");
    assert.equal(forUnknown.html, forKnown.html, "the same page");
    assert.equal(mailedWhileAnswering, 0, "no mail was handed over before the answer");
    assert.ok(await lastLinkToken(h, known), "the known address got its link after the answer");
  } finally {
    await h.close();
  }
});
