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
