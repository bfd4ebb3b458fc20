// The request-log columns support reads besides the money: the client address of every
// call that reached the gateway, and the output size of every call that got one.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayHarness, TINY_H, TINY_PNG, TINY_W, type GatewayHarness } from "./helpers.ts";

describe("request-log row: ip, width, height", () => {
  let g: GatewayHarness;
  before(async () => {
    g = await gatewayHarness();
  });
  after(() => g.close());

  test("a delivered call records the client address and the output's size", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200, await res.clone().text());
    const row = await g.h.admin("GET", `/requests/${res.headers.get("x-pd-request-id")}`);
    assert.equal(row.status, 200);
    assert.deepEqual([row.json.ip, row.json.width, row.json.height], [g.ip, TINY_W, TINY_H]);
  });

  test("a refused call records the address and no size", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "huge" });
    assert.equal(res.status, 400);
    const row = await g.h.admin("GET", `/requests/${res.headers.get("x-pd-request-id")}`);
    assert.equal(row.status, 200);
    assert.equal(row.json.ip, g.ip);
    assert.equal(row.json.width ?? null, null);
    assert.equal(row.json.height ?? null, null);
  });
});

describe("request-log row of a charged call: written by its capture's statement", () => {
  let g: GatewayHarness;
  before(async () => {
    g = await gatewayHarness();
  });
  after(() => g.close());

  /** A variant whose separate log writes are counted (the capture's own write is not one). */
  function counted() {
    const writes: string[] = [];
    const requestLog = g.h.services.requestLog;
    const v = g.variant({
      services: { requestLog: { ...requestLog, logRequest: (row) => (writes.push(row.requestId), requestLog.logRequest(row)) } },
    });
    return { v, writes };
  }

  test("a live call's row comes with the charge, complete, with no write of its own", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { v, writes } = counted();
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    const id = res.headers.get("x-pd-request-id")!;
    assert.deepEqual(writes, [], "no separate log write");
    const row = await g.h.services.requestLog.getRequest(id);
    assert.ok(row, "the row is there");
    assert.equal(row.status, 200);
    assert.equal(row.chargedKrw, Number(res.headers.get("x-pd-charged-krw")));
    assert.ok(row.chargedKrw > 0);
    assert.deepEqual([row.orgId, row.keyId, row.keyKind, row.tier, row.attempts, row.ip], [c.orgId, c.liveKeyId, "live", "preview", 1, g.ip]);
    assert.deepEqual([row.width, row.height, row.errorCode], [TINY_W, TINY_H, null]);
  });

  test("calls that charge nothing keep their own write: a test key's success, a live key's refusal", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { v, writes } = counted();
    const ok = await v.removebg(c.testKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    const bad = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "huge" });
    assert.equal(bad.status, 400);
    await bad.arrayBuffer();
    assert.deepEqual(writes, [ok.headers.get("x-pd-request-id"), bad.headers.get("x-pd-request-id")]);
  });
});
