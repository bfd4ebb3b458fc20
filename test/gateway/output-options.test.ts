// Output options and quality headers beyond the spec (DECISIONS.md "What
// remove.bg's clients also expect"): channels=rgba|alpha, bg_color, X-PD-Model,
// X-PD-Model-Input and X-PD-Uncertainty, through the public endpoint, with their bad values.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { expectError, gatewayHarness, TINY_PNG, TINY_W, TINY_H, type GatewayHarness } from "./helpers.ts";
import { DEFAULT_MODEL_LABEL } from "../support/default-model.ts";

let g: GatewayHarness;
let liveKey: string;
before(async () => {
  g = await gatewayHarness();
  liveKey = (await g.h.customer({ creditKrw: 100_000 })).liveKey;
});
after(() => g.close());

async function pixels(res: Response) {
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get("content-type"), "image/png");
  const d = await decodeImage(new Uint8Array(await res.arrayBuffer()));
  assert.ok(d.ok);
  return d.image;
}

describe("X-PD-Model, X-PD-Model-Input and X-PD-Uncertainty", () => {
  test("every cut-out names its model as name/version and carries an uncertainty in [0, 1]", async () => {
    const res = await g.removebg(liveKey, { image_file: TINY_PNG, size: "preview" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-pd-model"), DEFAULT_MODEL_LABEL);
    assert.equal(res.headers.get("x-pd-model-input"), "64x64", "the (stub) model's own input size, whatever the output size");
    const u = Number(res.headers.get("x-pd-uncertainty"));
    assert.ok(res.headers.get("x-pd-uncertainty") !== null && u >= 0 && u <= 1, `uncertainty ${u}`);
    // The spending-limit form of X-RateLimit-* read from this run's store (Postgres when DATABASE_URL is set).
    assert.equal(res.headers.get("x-ratelimit-limit"), "50000");
    assert.match(res.headers.get("x-ratelimit-remaining") ?? "", /^4\d{4}$/);
    await res.arrayBuffer();
  });

  test("errors carry neither", async () => {
    const res = await g.removebg(liveKey, { image_file: TINY_PNG, channels: "cmyk" });
    assert.equal(res.headers.get("x-pd-model"), null);
    assert.equal(res.headers.get("x-pd-model-input"), null);
    assert.equal(res.headers.get("x-pd-uncertainty"), null);
    await res.arrayBuffer();
  });
});

describe("channels", () => {
  test("channels=alpha is a greyscale PNG equal to the alpha of the rgba output", async () => {
    const rgba = await pixels(await g.removebg(liveKey, { image_file: TINY_PNG, size: "full" }));
    const res = await g.removebg(liveKey, { image_file: TINY_PNG, size: "full", channels: "alpha" });
    const raw = new Uint8Array(await res.clone().arrayBuffer());
    assert.equal(raw[25], 0, "IHDR colour type 0: greyscale");
    const alpha = await pixels(res);
    assert.deepEqual([alpha.width, alpha.height], [TINY_W, TINY_H]);
    let someSubject = false;
    for (let p = 0; p < TINY_W * TINY_H; p++) {
      const a = rgba.data[p * 4 + 3];
      assert.equal(alpha.data[p * 4], a, `pixel ${p}`);
      assert.equal(alpha.data[p * 4 + 3], 255, "the mask PNG itself is opaque");
      if (a > 0) someSubject = true;
    }
    assert.ok(someSubject, "the stub's ellipse is in the mask");
  });

  test("channels=alpha with semitransparency=false is the hardened alpha", async () => {
    const rgba = await pixels(await g.removebg(liveKey, { image_file: TINY_PNG, size: "full", semitransparency: "false" }));
    const alpha = await pixels(await g.removebg(liveKey, { image_file: TINY_PNG, size: "full", semitransparency: "false", channels: "alpha" }));
    for (let p = 0; p < TINY_W * TINY_H; p++) assert.equal(alpha.data[p * 4], rgba.data[p * 4 + 3]);
  });

  test("channels=rgba (any case) is the default output", async () => {
    const a = new Uint8Array(await (await g.removebg(liveKey, { image_file: TINY_PNG, size: "full" })).arrayBuffer());
    const b = new Uint8Array(await (await g.removebg(liveKey, { image_file: TINY_PNG, size: "full", channels: "RGBA" })).arrayBuffer());
    assert.deepEqual(b, a);
  });

  test("bad values: 400 invalid_parameter naming channels", async () => {
    for (const v of ["rgb", "", "alpha,rgba", "mask"]) {
      const e = await expectError(await g.removebg(liveKey, { image_file: TINY_PNG, channels: v }), 400, "invalid_parameter");
      assert.match(e.title, /channels/, v);
    }
    const twice = new FormData();
    twice.append("image_file", new Blob([TINY_PNG as Uint8Array<ArrayBuffer>]), "a.png");
    twice.append("channels", "alpha");
    twice.append("channels", "alpha");
    const res = await g.h.app.request("/v1.0/removebg", { method: "POST", body: twice, headers: { "x-api-key": liveKey, "x-forwarded-for": g.ip } });
    const e = await expectError(res, 400, "invalid_parameter");
    assert.match(e.title, /channels/);
  });
});

describe("bg_color", () => {
  const corner = (img: { data: Uint8ClampedArray }) => [...img.data.subarray(0, 4)];

  test("hex with or without '#', short forms, and CSS names give an opaque result over that colour", async () => {
    for (const [v, want] of [
      ["81d4fa", [0x81, 0xd4, 0xfa, 255]],
      ["#81D4FA", [0x81, 0xd4, 0xfa, 255]],
      ["#f00", [255, 0, 0, 255]],
      ["rebeccapurple", [0x66, 0x33, 0x99, 255]],
      ["White", [255, 255, 255, 255]],
    ] as const) {
      const img = await pixels(await g.removebg(liveKey, { image_file: TINY_PNG, size: "full", bg_color: v }));
      assert.deepEqual(corner(img), want, v);
      for (let p = 0; p < img.width * img.height; p++) assert.equal(img.data[p * 4 + 3], 255, `${v}: opaque everywhere`);
    }
  });

  test("a colour with alpha keeps the background that transparent; the subject stays", async () => {
    const img = await pixels(await g.removebg(liveKey, { image_file: TINY_PNG, size: "full", bg_color: "81d4fa77" }));
    assert.deepEqual(corner(img), [0x81, 0xd4, 0xfa, 0x77]);
    const centre = ((img.height >> 1) * img.width + (img.width >> 1)) * 4;
    assert.equal(img.data[centre + 3], 255);
  });

  test("the same price tiers: preview 22, full 110", async () => {
    const p = await g.removebg(liveKey, { image_file: TINY_PNG, size: "preview", bg_color: "red" });
    assert.equal(p.headers.get("x-pd-charged-krw"), "22");
    await p.arrayBuffer();
  });

  test("bad values: 400 invalid_parameter naming bg_color", async () => {
    for (const v of ["81d4f", "#12345", "zzzzzz", "notacolour", "#81d4fa7", "rgb(1,2,3)", "##81d4fa"]) {
      const e = await expectError(await g.removebg(liveKey, { image_file: TINY_PNG, bg_color: v }), 400, "invalid_parameter");
      assert.match(e.title, /bg_color/, v);
    }
  });

  test("the spec's rejections are unchanged next to the new parts", async () => {
    await expectError(await g.removebg(liveKey, { image_file: TINY_PNG, bg_color: "red", crop: "true" }), 400, "unsupported_parameter");
    await expectError(await g.removebg(liveKey, { image_file: TINY_PNG, channels: "alpha", format: "jpg" }), 400, "unsupported_parameter");
    await expectError(await g.removebg(liveKey, { image_file: TINY_PNG, bg_image_file: "x" }), 400, "unsupported_parameter");
  });
});
