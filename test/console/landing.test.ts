// The landing page: the before/after pictures are served from our own origin (the
// cut-out a real RGBA PNG with transparent pixels), the licence note sits beside them,
// and prices and the free tier come from the billing modules.
import { test } from "node:test";
import assert from "node:assert/strict";
import { FULL_PRICE_KRW, PREVIEW_PRICE_KRW } from "../../src/billing/prices.ts";
import { TEST_CALLS_PER_PERIOD } from "../../src/billing/test-quota.ts";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { makeHarness } from "../support/harness.ts";

test("landing: before/after from our own files with its licence, prices and the three ways in", async () => {
  const h = await makeHarness({ embedded: true });
  try {
    const res = await h.app.request("/");
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, new RegExp(`data-testid="price-preview">${PREVIEW_PRICE_KRW} KRW<`));
    assert.match(html, new RegExp(`data-testid="price-full">${FULL_PRICE_KRW} KRW<`));
    assert.match(html, new RegExp(`test key: ${TEST_CALLS_PER_PERIOD} calls a month`));
    assert.match(html, /Stéfan van der Walt, CC0 1\.0/, "licence note");
    for (const way of ["The API", "The library", "The command line"]) assert.ok(html.includes(`>${way}</h3>`), way);
    assert.match(html, /import \{ createRemover \} from &quot;pixeldrop&quot;|import \{ createRemover \} from "pixeldrop"/);
    assert.match(html, /npx pixeldrop remove/);
    assert.doesNotMatch(html, /<script|https?:\/\/(?!127\.0\.0\.1|localhost)[a-z]/i, "no scripts, nothing from elsewhere");

    const srcs = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(srcs, ["/console/static/chelsea-cutout.png", "/console/static/chelsea.jpg"]);
    const cut = await h.app.request(srcs[0]);
    assert.equal(cut.headers.get("content-type"), "image/png");
    const decoded = await decodeImage(new Uint8Array(await cut.arrayBuffer()));
    assert.ok(decoded.ok);
    const { width, height, data } = decoded.image;
    assert.deepEqual([width, height], [451, 300]);
    let clear = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] === 0) clear++;
    assert.ok(clear > width * height * 0.05, `a real cut-out has transparent background (${clear} clear pixels)`);
    const photo = await h.app.request(srcs[1]);
    assert.equal(photo.headers.get("content-type"), "image/jpeg");
    assert.deepEqual([...new Uint8Array(await photo.arrayBuffer()).subarray(0, 2)], [0xff, 0xd8]);
  } finally {
    await h.close();
  }
});
