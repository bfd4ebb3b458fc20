// Money through HTTP (spec §4 billing rules, §7 402 row): the reserve by requested
// tier, the capture by output pixels, the paid-success headers, test keys never
// charged, and every error free with no hold left open.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { fixture } from "../support/harness.ts";
import type { Services } from "../../src/wiring/services.ts";
import { kstDay } from "../../src/billing/kst.ts";
import { RECENT_SPEND_MEMORY_MS } from "../../src/billing/recent-spend.ts";
import {
  assertNoOpenHold,
  balanceOf,
  capturesOf,
  expectError,
  gatewayHarness,
  heldProduct,
  holdsOf,
  productError,
  productPng,
  TINY_PNG,
  type GatewayHarness,
} from "./helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const ASTRONAUT = fixture("photos/astronaut.png"); // 512 × 512 = 262,144 px: above the preview tier

async function paid(res: Response) {
  assert.equal(res.status, 200, await res.clone().text());
  await res.arrayBuffer();
  return {
    charged: Number(res.headers.get("x-pd-charged-krw")),
    balance: Number(res.headers.get("x-pd-balance-krw")),
    width: Number(res.headers.get("x-width")),
    height: Number(res.headers.get("x-height")),
    requestId: res.headers.get("x-pd-request-id")!,
  };
}

describe("402 insufficient_credits", () => {
  test("the reserve of the requested tier must be available", async () => {
    const c = await g.h.customer({ creditKrw: 100 });
    // Full tier reserves 110 even though this image would only cost 22.
    await expectError(await g.removebg(c.liveKey, { image_file: TINY_PNG }), 402, "insufficient_credits");
    await expectError(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "auto" }), 402, "insufficient_credits");
    const r = await paid(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }));
    assert.deepEqual([r.charged, r.balance], [22, 78]);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 78, availableKrw: 78 });
  });

  test("no credit at all, and a balance one won short of the preview price", async () => {
    const none = await g.h.customer();
    await expectError(await g.removebg(none.liveKey, { image_file: TINY_PNG, size: "preview" }), 402, "insufficient_credits");
    const short = await g.h.customer({ creditKrw: 21 });
    await expectError(await g.removebg(short.liveKey, { image_file: TINY_PNG, size: "small" }), 402, "insufficient_credits");
    assert.deepEqual(await holdsOf(g.h, short.orgId), [], "a refused reserve leaves no hold");
    // The test key of an org without credit still works.
    const t = await g.removebg(none.testKey, { image_file: TINY_PNG });
    assert.equal(t.status, 200);
  });
});

describe("reserve by requested tier", () => {
  const tiers: [string | undefined, number][] = [
    ["preview", 22],
    ["small", 22],
    ["regular", 22],
    ["auto", 110],
    ["full", 110],
    [undefined, 110],
  ];
  for (const [size, reserve] of tiers) {
    test(`size=${size ?? "(omitted)"} reserves ${reserve} while processing`, async () => {
      const held = heldProduct();
      const v = g.variant({ product: held.fn });
      const c = await g.h.customer({ creditKrw: 1000 });
      const pending = v.removebg(c.liveKey, { image_file: TINY_PNG, ...(size ? { size } : {}) });
      await held.untilArrived(1);
      const holds = await holdsOf(g.h, c.orgId);
      assert.equal(holds.length, 1);
      assert.deepEqual([holds[0]!.amount_krw, holds[0]!.state], [reserve, "open"]);
      assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 - reserve });
      held.releaseAll();
      const r = await paid(await pending);
      // The fake product answers 64 × 48: at most 250,000 px, so the preview price.
      assert.equal(r.charged, 22);
      await assertNoOpenHold(g.h, c.orgId);
    });
  }
});

describe("capture by output pixels", () => {
  test("a small image under the full tier is charged 22, a large one 110", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const small = await paid(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "full" }));
    assert.deepEqual([small.width, small.height, small.charged, small.balance], [64, 48, 22, 978]);
    const large = await paid(await g.removebg(c.liveKey, { image_file: ASTRONAUT }));
    assert.deepEqual([large.width, large.height, large.charged, large.balance], [512, 512, 110, 868]);
    const preview = await paid(await g.removebg(c.liveKey, { image_file: ASTRONAUT, size: "regular" }));
    assert.ok(preview.width * preview.height <= 250_000, `${preview.width}x${preview.height}`);
    assert.deepEqual([preview.charged, preview.balance], [22, 846]);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 846, availableKrw: 846 });
    for (const r of [small, large, preview]) assert.deepEqual(await capturesOf(g.h, r.requestId), [r.charged]);
    const holds = new Map((await holdsOf(g.h, c.orgId)).map((h) => [h.request_id, [h.amount_krw, h.state, h.captured_krw]]));
    assert.deepEqual(
      [small, large, preview].map((r) => holds.get(r.requestId)),
      [
        [110, "captured", 22],
        [110, "captured", 110],
        [22, "captured", 22],
      ],
    );
  });

  test("the request-log row records tier and charge", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const r = await paid(await g.removebg(c.liveKey, { image_file: TINY_PNG }));
    const row = await g.h.admin("GET", `/requests/${r.requestId}`);
    assert.equal(row.status, 200);
    assert.equal(row.json.tier, "full");
    assert.equal(row.json.chargedKrw, 22);
    assert.equal(row.json.status, 200);
    assert.equal(row.json.keyKind, "live");
  });
});

describe("test keys", () => {
  test("never charged, no hold, output at most 250,000 px whatever size is asked", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    for (const size of ["full", "auto", "preview"]) {
      const res = await g.removebg(c.testKey, { image_file: ASTRONAUT, size });
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
      assert.equal(res.headers.get("x-pd-charged-krw"), null);
      assert.equal(res.headers.get("x-pd-balance-krw"), null);
      assert.equal(res.headers.get("x-pd-test-size"), "preview");
      const px = Number(res.headers.get("x-width")) * Number(res.headers.get("x-height"));
      assert.ok(px > 0 && px <= 250_000, `${px} px`);
    }
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    assert.deepEqual(await holdsOf(g.h, c.orgId), []);
  });

  test("an org with no credit gets preview output from its test key", async () => {
    const c = await g.h.customer();
    const res = await g.removebg(c.testKey, { image_file: ASTRONAUT });
    assert.equal(res.status, 200);
    const row = await g.h.admin("GET", `/requests/${res.headers.get("x-pd-request-id")}`);
    assert.deepEqual([row.json.tier, row.json.chargedKrw, row.json.keyKind], ["preview", 0, "test"]);
  });
});

describe("errors are free", () => {
  test("parameter, product and upstream errors leave the balance untouched and no hold open", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const answers = [
      () => productError(500, "inference_failed"),
      () => productError(400, "invalid_parameter"),
      () => new Response("<html>bad gateway</html>", { status: 502 }),
      () => new Response("not a png", { status: 200, headers: { "content-type": "image/png", "x-width": "1", "x-height": "1" } }),
    ];
    for (const answer of answers) {
      const v = g.variant({ product: async () => answer() });
      const res = await v.removebg(c.liveKey, { image_file: TINY_PNG });
      assert.ok(res.status >= 400, `status ${res.status}`);
      assert.equal(res.headers.get("x-pd-charged-krw"), null);
      assert.equal(res.headers.get("x-pd-balance-krw"), null);
      await res.arrayBuffer();
    }
    await expectError(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "hd" }), 400, "unsupported_parameter");
    await expectError(await g.removebg(c.liveKey, { image_file: fixture("images/png-bomb-20000x20000.png") }), 400, "invalid_parameter");
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
    const holds = await holdsOf(g.h, c.orgId);
    assert.ok(holds.length >= 5 && holds.every((h) => h.state === "released"), JSON.stringify(holds));
  });

  /** A variant whose ledger captures with `capture` (the rest of billing is the harness's). */
  const withCapture = (capture: Services["billing"]["capture"]) => g.variant({ services: { billing: { ...g.h.services.billing, capture } } });

  test("a capture that fails after the image was made: 503, nothing charged, hold released, no image", async () => {
    const v = withCapture(async () => {
      throw new Error("ledger unavailable");
    });
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG });
    await expectError(res, 503, "service_unavailable");
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("a capture the ledger refuses (the hold was already released): 503 saying so, nothing charged", async () => {
    const billing = g.h.services.billing;
    // As the sweeper does to a hold that outlived its request: released before the capture.
    const v = withCapture(async (requestId, amountKrw) => {
      await billing.release(requestId);
      return billing.capture(requestId, amountKrw);
    });
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG });
    const body = await res.clone().json();
    await expectError(res, 503, "service_unavailable");
    assert.match(body.errors[0].title, /already released; nothing was charged/);
    assert.doesNotMatch(body.errors[0].title, /temporarily unavailable/);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
  });
});

describe("X-RateLimit-* after a charge come with the capture", () => {
  /** A variant whose gateway reads through a database handle that counts spending-counter reads. */
  function countingCounterReads(product?: ReturnType<typeof heldProduct>["fn"]) {
    const db = g.h.services.db;
    const seen = { reads: 0 };
    const counting: Services["db"] = Object.assign(Object.create(db) as Services["db"], {
      query: (text: string, params?: unknown[], o?: Parameters<Services["db"]["query"]>[2]) => {
        if (/FROM spend_counters/.test(text)) seen.reads++;
        return db.query(text, params, o);
      },
    });
    return { v: g.variant({ services: { db: counting }, product }), seen };
  }
  const rate = (res: Response) => [res.headers.get("x-ratelimit-limit"), res.headers.get("x-ratelimit-remaining"), res.headers.get("x-ratelimit-reset")];

  test("a charged call: Remaining counts this charge, and no statement of its own reads the counters", async () => {
    const { v, seen } = countingCounterReads();
    const c = await g.h.customer({ creditKrw: 1000 });
    const first = await v.removebg(c.liveKey, { image_file: TINY_PNG });
    const p = await paid(first);
    // Full tier reserved (110), a 64 × 48 output charged at the preview price: the counters gave the rest back.
    assert.equal(p.charged, 22);
    const [limit, remaining, reset] = rate(first);
    assert.deepEqual([limit, remaining], ["50000", String(50_000 - 22)]);
    assert.ok(Number(reset) * 1000 > g.clock.now());
    const second = await v.removebg(c.liveKey, { image_file: TINY_PNG });
    await paid(second);
    assert.deepEqual(rate(second), ["50000", String(50_000 - 44), reset]);
    assert.equal(seen.reads, 0, "the capture's statement carried the counters");
  });

  test("a refusal within a second of this gateway's charge reuses its counters; later ones read them, and see money moved elsewhere", async () => {
    const { v, seen } = countingCounterReads();
    const c = await g.h.customer({ creditKrw: 1000 });
    await paid(await v.removebg(c.liveKey, { image_file: TINY_PNG }));
    const refuse = async () => {
      const bad = await v.removebg(c.liveKey, { image_file: TINY_PNG, bg_color: "nope" });
      const [, remaining] = rate(bad);
      await expectError(bad, 400, "invalid_parameter");
      return remaining;
    };
    assert.equal(await refuse(), String(50_000 - 22));
    assert.equal(seen.reads, 0, "the capture's counters are remembered (recent-spend.ts)");
    // Money moved by another process: unseen for at most RECENT_SPEND_MEMORY_MS.
    const day = kstDay(g.clock.now());
    await g.h.services.db.query("UPDATE spend_counters SET krw = krw + 1000 WHERE scope_id = $1 AND period = $2", [c.orgId, day]);
    assert.equal(await refuse(), String(50_000 - 22));
    g.clock.advance(RECENT_SPEND_MEMORY_MS);
    assert.equal(await refuse(), String(50_000 - 1022));
    assert.equal(seen.reads, 1);
    assert.equal(await refuse(), String(50_000 - 1022));
    assert.equal(seen.reads, 1, "the read is remembered too");
    // A charge through this gateway shows at once on the next refusal.
    await paid(await v.removebg(c.liveKey, { image_file: TINY_PNG }));
    assert.equal(await refuse(), String(50_000 - 1044));
    assert.equal(seen.reads, 1);
  });

  test("a hold this gateway reserves shows in a refusal's Remaining at once, without a read; a release makes the next refusal read", async () => {
    let fails = false;
    const held = heldProduct(() => (fails ? productError(400, "invalid_parameter") : productPng()));
    const { v, seen } = countingCounterReads(held.fn);
    const c = await g.h.customer({ creditKrw: 1000 });
    const refuse = async () => {
      const bad = await v.removebg(c.liveKey, { image_file: TINY_PNG, bg_color: "nope" });
      const [, remaining] = rate(bad);
      await expectError(bad, 400, "invalid_parameter");
      return remaining;
    };
    const first = v.removebg(c.liveKey, { image_file: TINY_PNG });
    await held.untilArrived(1);
    held.releaseAll();
    await paid(await first);
    // Full tier: 110 held while the call runs.
    const pending = v.removebg(c.liveKey, { image_file: TINY_PNG });
    await held.untilArrived(2);
    assert.equal(await refuse(), String(50_000 - 22 - 110));
    assert.equal(seen.reads, 0);
    fails = true;
    held.releaseAll();
    await expectError(await pending, 400, "invalid_parameter");
    // The hold went back; how much was held is not known where it is released, so the counters are read.
    assert.equal(await refuse(), String(50_000 - 22));
    assert.equal(seen.reads, 1);
  });
});
