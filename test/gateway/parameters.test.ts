// POST /v1.0/removebg request rejections (spec §4 parameter table, §7 400 and 413 rows,
// docs/DECISIONS.md "Parameters"): every rejected part and value, the body limit with
// and without Content-Length, and the accepted values that must not be rejected.
// Rejections are free: no charge and no hold left open.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { NO_PROXY } from "../../src/http/proxy-trust.ts";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import { serve } from "../../src/wiring/serve.ts";
import { MAX_BODY_BYTES } from "../../src/http/read-body.ts";
import { DRAIN_MAX_BYTES } from "../../src/http/unread-body.ts";
import { chunkedUpload } from "../support/chunked-upload.ts";
import { countedBody } from "../support/counted-body.ts";
import { fixture } from "../support/harness.ts";
import {
  assertNoOpenHold,
  balanceOf,
  expectError,
  gatewayHarness,
  TINY_PNG,
  type GatewayHarness,
} from "./helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

async function liveCustomer() {
  return g.h.customer({ creditKrw: 10_000 });
}

/** Sends a raw body (not FormData) with the given content type. */
function rawPost(key: string, body: BodyInit | null, headers: Record<string, string>, extra: RequestInit = {}) {
  return g.h.app.request("/v1.0/removebg", {
    method: "POST",
    body,
    headers: { "x-api-key": key, "x-forwarded-for": g.ip, ...headers },
    ...extra,
  });
}

describe("400 invalid_parameter", () => {
  test("multipart that cannot be read", async () => {
    const c = await liveCustomer();
    const res = await rawPost(c.liveKey, "--xyz\r\nthis is not a part\r\n", {
      "content-type": "multipart/form-data; boundary=xyz",
    });
    await expectError(res, 400, "invalid_parameter");
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("a body that is not multipart/form-data", async () => {
    const c = await liveCustomer();
    for (const [type, body] of [
      // (JSON or urlencoded bodies naming image_url/image_file_b64 are unsupported_parameter: non-multipart.test.ts)
      ["application/json", JSON.stringify({ size: "preview" })],
      ["application/x-www-form-urlencoded", "size=preview"],
      ["multipart/form-data", "no boundary given"],
      ["image/png", TINY_PNG],
    ] as const) {
      const res = await rawPost(c.liveKey, body as BodyInit, { "content-type": type });
      await expectError(res, 400, "invalid_parameter");
    }
  });

  test("image_file missing, empty, sent as text or sent twice", async () => {
    const c = await liveCustomer();
    await expectError(await g.removebg(c.liveKey, { size: "preview" }), 400, "invalid_parameter");
    await expectError(await g.removebg(c.liveKey, { image_file: new Uint8Array(0) }), 400, "invalid_parameter");
    await expectError(await g.removebg(c.liveKey, { image_file: "iVBORw0KGgo=" }), 400, "invalid_parameter");
    const twice = new FormData();
    twice.append("image_file", new Blob([TINY_PNG as Uint8Array<ArrayBuffer>]), "a.png");
    twice.append("image_file", new Blob([TINY_PNG as Uint8Array<ArrayBuffer>]), "b.png");
    const res = await g.h.app.request("/v1.0/removebg", {
      method: "POST",
      body: twice,
      headers: { "x-api-key": c.liveKey, "x-forwarded-for": g.ip },
    });
    await expectError(res, 400, "invalid_parameter");
  });

  test("a text part sent twice is ambiguous", async () => {
    const c = await liveCustomer();
    const form = new FormData();
    form.append("image_file", new Blob([TINY_PNG as Uint8Array<ArrayBuffer>]), "a.png");
    form.append("size", "preview");
    form.append("size", "full");
    const res = await g.h.app.request("/v1.0/removebg", {
      method: "POST",
      body: form,
      headers: { "x-api-key": c.liveKey, "x-forwarded-for": g.ip },
    });
    await expectError(res, 400, "invalid_parameter");
  });

  test("corrupt, truncated or unknown-format image is the input's fault, not a 500", async () => {
    const c = await liveCustomer();
    const before = await balanceOf(g.h, c.orgId);
    const garbage = crypto.getRandomValues(new Uint8Array(4096));
    for (const image of [garbage, fixture("images/png-rgba-truncated.png"), fixture("images/jpeg-baseline-truncated.jpg")]) {
      const res = await g.removebg(c.liveKey, { image_file: image, size: "preview" });
      await expectError(res, 400, "invalid_parameter");
    }
    assert.deepEqual(await balanceOf(g.h, c.orgId), before, "a rejected image is free");
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("an input claiming more than 12 megapixels is refused from its header", async () => {
    const c = await liveCustomer();
    const res = await g.removebg(c.liveKey, { image_file: fixture("images/png-bomb-20000x20000.png") });
    const e = await expectError(res, 400, "invalid_parameter");
    assert.match(e.title, /20000/, "the title names the size");
    assert.match(e.title, /12/, "the title names the limit");
    await assertNoOpenHold(g.h, c.orgId);
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 10_000);
  });

  test("crop_margin is not supported", async () => {
    const c = await liveCustomer();
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, crop_margin: "10%" });
    await expectError(res, 400, "invalid_parameter");
  });

  test("semitransparency other than a boolean word", async () => {
    const c = await liveCustomer();
    const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, semitransparency: "maybe" });
    await expectError(res, 400, "invalid_parameter");
  });
});

describe("400 unsupported_parameter", () => {
  const rejected: [string, Record<string, string>][] = [
    ["size=hd", { size: "hd" }],
    ["size=4k", { size: "4k" }],
    ["size=medium", { size: "medium" }],
    ["size empty", { size: "" }],
    ["type=person", { type: "person" }],
    ["format=jpg", { format: "jpg" }],
    ["format=zip", { format: "zip" }],
    ["crop=true", { crop: "true" }],
    ["crop=1", { crop: "1" }],
    ["image_url", { image_url: "https://example.com/cat.jpg" }],
    ["image_file_b64", { image_file_b64: "iVBORw0KGgo=" }],
    // channels and bg_color are supported (test/gateway/output-options.test.ts).
    ["unknown part bg_image_url", { bg_image_url: "https://example.com/bg.jpg" }],
    ["unknown part roi", { roi: "0% 0% 100% 100%" }],
  ];
  for (const [name, fields] of rejected) {
    test(name, async () => {
      const c = await liveCustomer();
      const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, ...fields });
      const e = await expectError(res, 400, "unsupported_parameter");
      if (name.startsWith("unknown part")) assert.match(e.title, new RegExp(Object.keys(fields)[0]!), "the title names the part");
    });
  }

  test("any query string, even one that repeats an allowed part", async () => {
    const c = await liveCustomer();
    for (const query of ["?size=preview", "?x=1", "?image_url=https%3A%2F%2Fexample.com%2Fa.png"]) {
      const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, { query });
      await expectError(res, 400, "unsupported_parameter");
    }
    await assertNoOpenHold(g.h, c.orgId);
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 10_000);
  });
});

describe("accepted values", () => {
  test("every allowed size, type, format, crop and semitransparency value is processed", async () => {
    const c = await liveCustomer();
    const accepted: Record<string, string>[] = [
      {},
      { size: "preview" },
      { size: "small" },
      { size: "regular" },
      { size: "auto" },
      { size: "full" },
      { type: "product", format: "png" },
      { type: "auto", format: "auto" },
      { crop: "false" },
      { semitransparency: "false" },
      { semitransparency: "TRUE" },
    ];
    for (const fields of accepted) {
      const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, ...fields });
      assert.equal(res.status, 200, `${JSON.stringify(fields)}: ${await res.clone().text()}`);
      assert.equal(res.headers.get("content-type"), "image/png");
      await res.arrayBuffer();
    }
  });
});

describe("413 file_too_large", () => {
  test("Content-Length above 12,000,000 is refused before the body is read", async () => {
    const c = await liveCustomer();
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(ctrl) {
          pulled += 1;
          ctrl.enqueue(new Uint8Array(1));
          ctrl.close();
        },
      },
      { highWaterMark: 0 }, // pull only when someone reads
    );
    const res = await rawPost(
      c.liveKey,
      body,
      { "content-type": "multipart/form-data; boundary=b", "content-length": "12000001" },
      { duplex: "half" } as RequestInit,
    );
    const e = await expectError(res, 413, "file_too_large");
    assert.match(e.title, /12,000,000/);
    assert.equal(pulled, 0, "the body was not read");
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("a chunked body is refused once it passes the limit, and the rest is not read", async () => {
    const c = await liveCustomer();
    const { stream, state } = countedBody(100_000_000);
    const res = await rawPost(c.liveKey, stream, { "content-type": "multipart/form-data; boundary=b" }, { duplex: "half" } as RequestInit);
    await expectError(res, 413, "file_too_large");
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(state.pulled > 12_000_000, `the limit was passed (${state.pulled})`);
    assert.ok(state.pulled <= 12_000_000 + 4 * 64 * 1024, `reading stopped at the limit, pulled ${state.pulled}`);
    assert.equal(state.cancelled, true, "the body stream was cancelled");
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("a body of exactly 12,000,000 bytes is not too large", async () => {
    const c = await liveCustomer();
    const head = new TextEncoder().encode(
      '--b\r\nContent-Disposition: form-data; name="image_file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n',
    );
    const tail = new TextEncoder().encode("\r\n--b--\r\n");
    const body = new Uint8Array(12_000_000);
    body.set(head, 0);
    body.set(TINY_PNG, head.length);
    body.set(tail, body.length - tail.length);
    const res = await rawPost(c.liveKey, body, { "content-type": "multipart/form-data; boundary=b", "content-length": "12000000" });
    assert.notEqual(res.status, 413, await res.clone().text());
    // One byte more is over the limit, whether announced or not.
    const over = new Uint8Array(12_000_001);
    over.set(body.subarray(0, body.length - tail.length), 0);
    over.set(tail, over.length - tail.length);
    await expectError(await rawPost(c.liveKey, over, { "content-type": "multipart/form-data; boundary=b" }), 413, "file_too_large");
  });

  test("a stranger's large body is not read at all: the key is checked first", async () => {
    const { stream, state } = countedBody(100_000_000);
    const res = await rawPost("pd_live_" + "x".repeat(40), stream, { "content-type": "multipart/form-data; boundary=b" }, {
      duplex: "half",
    } as RequestInit);
    await expectError(res, 401, "invalid_api_key");
    assert.ok(state.pulled <= 2 * 64 * 1024, `pulled ${state.pulled} bytes of an unauthenticated body`);
  });

  test("over a real socket: a chunked upload is answered 413 and the connection stops taking bytes", async () => {
    const c = await liveCustomer();
    const v = g.variant({ limiter: createMemoryLimiter(), config: { TRUST_PROXY: NO_PROXY } });
    const server = await serve(v.app.fetch, { port: 0, hostname: "127.0.0.1" });
    const cap = 200_000_000;
    try {
      const outcome = await chunkedUpload(server.port, "/v1.0/removebg", { "x-api-key": c.liveKey, "content-type": "multipart/form-data; boundary=b" }, cap);
      assert.equal(outcome.status, 413);
      assert.match(outcome.body, /file_too_large/);
      // What was accepted is the cap, the bytes read off before the answer and what the
      // socket buffers hold (loopback buffers grow to several MB on a busy machine),
      // not the whole upload.
      const bound = MAX_BODY_BYTES + DRAIN_MAX_BYTES + 32_000_000;
      assert.ok(bound < cap / 2);
      assert.ok(outcome.sentAtEnd < bound, `the server kept reading: ${outcome.sentAtEnd} bytes accepted`);
    } finally {
      await server.close(1000);
    }
  });
});
