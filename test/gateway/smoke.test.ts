// The paid happy path end to end through HTTP: a live key, a preview call, the
// headers, the charge, the request-log row.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fixture } from "../support/harness.ts";
import { gatewayHarness } from "./helpers.ts";

test("live preview call is charged 22 KRW once and logged", async () => {
  // gatewayHarness: the same harness on a copied, already migrated PGlite (no initdb).
  const g = await gatewayHarness();
  const h = g.h;
  try {
    const c = await h.customer({ creditKrw: 1000 });
    const res = await h.removebg(c.liveKey, { image_file: fixture("photos/chelsea.png"), size: "preview" });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("x-pd-charged-krw"), "22");
    assert.equal(res.headers.get("x-pd-balance-krw"), "978");
    assert.equal(res.headers.get("x-width"), "451");
    assert.equal(res.headers.get("x-height"), "300");
    const id = res.headers.get("x-pd-request-id")!;
    assert.match(id, /^req_/);
    const row = await h.admin("GET", `/requests/${id}`);
    assert.equal(row.status, 200);
    assert.equal(row.json.chargedKrw, 22);
    assert.equal(row.json.status, 200);
    const org = await h.admin("GET", `/orgs/${c.orgId}`);
    assert.equal(org.json.balanceKrw, 978);
    assert.equal(org.json.availableKrw, 978);
  } finally {
    await g.close();
  }
});
