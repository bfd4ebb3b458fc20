// The TypeScript client's options and result fields beyond the spec:
// channels, bgColor, model, uncertainty and rateLimit, against the app in process
// (the client's fetch is the app's own request function), bad values included.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createClient, PixeldropError, type PixeldropClient } from "../../src/client/index.ts";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { gatewayHarness, TINY_PNG, TINY_W, TINY_H, type GatewayHarness } from "../gateway/helpers.ts";
import { DEFAULT_MODEL_LABEL } from "../support/default-model.ts";

let g: GatewayHarness;
let live: PixeldropClient;
let testKeyClient: PixeldropClient;
before(async () => {
  g = await gatewayHarness();
  const c = await g.h.customer({ creditKrw: 10_000 });
  const fetch = async (url: string, init: RequestInit) => g.h.app.request(url, init);
  live = createClient({ apiKey: c.liveKey, baseUrl: "http://pixeldrop.test", fetch });
  testKeyClient = createClient({ apiKey: c.testKey, baseUrl: "http://pixeldrop.test", fetch });
});
after(() => g.close());

async function decoded(bytes: Uint8Array) {
  const d = await decodeImage(bytes);
  assert.ok(d.ok);
  return d.image;
}

test("model, uncertainty and the live key's spending limit come back on the result", async () => {
  const r = await live.removeBackground(TINY_PNG, { size: "preview" });
  assert.equal(r.model, DEFAULT_MODEL_LABEL);
  assert.ok(typeof r.uncertainty === "number" && r.uncertainty >= 0 && r.uncertainty <= 1);
  assert.equal(r.rateLimit?.limit, 50_000);
  assert.equal(r.rateLimit?.remaining, 50_000 - 22);
  assert.ok(Number.isInteger(r.rateLimit?.reset));
});

test("a test key's rateLimit counts its minute down", async () => {
  const a = await testKeyClient.removeBackground(TINY_PNG);
  const b = await testKeyClient.removeBackground(TINY_PNG);
  assert.equal(a.rateLimit?.limit, 10);
  assert.equal(b.rateLimit!.remaining, a.rateLimit!.remaining - 1);
});

test("channels: alpha equals the alpha of the rgba result", async () => {
  const rgba = await decoded((await live.removeBackground(TINY_PNG, { channels: "rgba" })).bytes);
  const alpha = await decoded((await live.removeBackground(TINY_PNG, { channels: "alpha" })).bytes);
  assert.deepEqual([alpha.width, alpha.height], [TINY_W, TINY_H]);
  for (let p = 0; p < TINY_W * TINY_H; p++) assert.equal(alpha.data[p * 4], rgba.data[p * 4 + 3]);
});

test("bgColor: an opaque colour gives an opaque result over it", async () => {
  const img = await decoded((await live.removeBackground(TINY_PNG, { bgColor: "#81d4fa" })).bytes);
  assert.deepEqual([...img.data.subarray(0, 4)], [0x81, 0xd4, 0xfa, 255]);
});

test("bad values are thrown as PixeldropError 400 invalid_parameter naming the part, at once", async () => {
  for (const [options, part] of [
    [{ channels: "rgb" as never }, /channels/],
    [{ bgColor: "not-a-colour" }, /bg_color/],
    [{ bgColor: "#12345" }, /bg_color/],
  ] as const) {
    await assert.rejects(live.removeBackground(TINY_PNG, options), (err: unknown) => {
      assert.ok(err instanceof PixeldropError);
      assert.deepEqual([err.status, err.code, err.attempts], [400, "invalid_parameter", 1]);
      assert.match(err.title, part);
      return true;
    });
  }
});
