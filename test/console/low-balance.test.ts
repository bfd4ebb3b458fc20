// The low-balance e-mail: the owner sets a threshold on the console's Limits
// page; the capture that takes the balance below it sends one e-mail (read from the
// mailer's outbox), later captures below it send none, and only a credit that lifts
// the balance back to the threshold re-arms it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { listOutbox } from "../../src/mail/index.ts";
import { gatewayHarness, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { signedUp } from "./client.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const SUBJECT = /balance is below/;

async function owner() {
  const s = await signedUp(g.h);
  const app = await g.h.admin("POST", `/orgs/${s.orgId}/apps`, { name: "shop", productEnabled: true });
  const key = await g.h.admin("POST", `/apps/${app.json.appId}/keys`, { kind: "live" });
  assert.equal(key.status, 201, JSON.stringify(key.json));
  return { ...s, liveKey: key.json.key as string };
}

async function lowBalanceMails(email: string) {
  return (await listOutbox(g.h.services.db, { to: email, limit: 200 })).filter((m) => SUBJECT.test(m.subject));
}

async function pay(key: string, expectBalance: number) {
  const res = await g.removebg(key, { image_file: TINY_PNG, size: "preview" });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get("x-pd-balance-krw"), String(expectBalance));
  await res.arrayBuffer();
}

const credit = (orgId: string, amountKrw: number) => g.h.admin("POST", `/orgs/${orgId}/credit`, { amountKrw });

test("one e-mail when a capture crosses the threshold, none while below, again after a top-up lifts it", async () => {
  const o = await owner();
  await o.client.get("/console/limits");
  const saved = await o.client.postFollow("/console/limits/low-balance", { lowBalanceKrw: "100" });
  assert.equal(saved.status, 200);
  assert.match(saved.html, /name="lowBalanceKrw"[^>]*value="100"/);

  await credit(o.orgId, 150);
  await pay(o.liveKey, 128);
  await pay(o.liveKey, 106);
  assert.equal((await lowBalanceMails(o.email)).length, 0, "above the threshold: nothing");
  await pay(o.liveKey, 84);
  const first = await lowBalanceMails(o.email);
  assert.equal(first.length, 1, "the crossing capture sends one");
  assert.match(first[0]!.text, /84 KRW, below the 100 KRW/);
  await pay(o.liveKey, 62);
  await credit(o.orgId, 10); // 72: a top-up that stays below does not re-arm
  await pay(o.liveKey, 50);
  assert.equal((await lowBalanceMails(o.email)).length, 1, "still below: no second e-mail");

  await credit(o.orgId, 50); // 100: back at the threshold
  await pay(o.liveKey, 78);
  assert.equal((await lowBalanceMails(o.email)).length, 2, "re-armed by the top-up, crossed again");
});

test("no threshold, no e-mail; an empty field turns it off", async () => {
  const o = await owner();
  await credit(o.orgId, 30);
  await pay(o.liveKey, 8);
  assert.equal((await lowBalanceMails(o.email)).length, 0);

  await o.client.get("/console/limits");
  await o.client.postFollow("/console/limits/low-balance", { lowBalanceKrw: "1,000" });
  await o.client.postFollow("/console/limits/low-balance", { lowBalanceKrw: "" });
  const page = await o.client.get("/console/limits");
  assert.match(page.html, /name="lowBalanceKrw"[^>]*value=""/);
  await credit(o.orgId, 100);
  await pay(o.liveKey, 86);
  assert.equal((await lowBalanceMails(o.email)).length, 0);
});

test("bad thresholds are refused on the page and change nothing", async () => {
  const o = await owner();
  await o.client.get("/console/limits");
  await o.client.postFollow("/console/limits/low-balance", { lowBalanceKrw: "5000" });
  for (const bad of ["abc", "-5", "100000001", "1.5"]) {
    const p = await o.client.post("/console/limits/low-balance", { lowBalanceKrw: bad });
    assert.equal(p.status, 400, bad);
    assert.match(p.html, /Enter a whole number of won/);
  }
  assert.match((await o.client.get("/console/limits")).html, /name="lowBalanceKrw"[^>]*value="5000"/);
});

test("another session's CSRF-less post cannot set it", async () => {
  const o = await owner();
  const p = await o.client.raw("POST", "/console/limits/low-balance", { lowBalanceKrw: "1" });
  assert.notEqual(p.status, 303);
});
