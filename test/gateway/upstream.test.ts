// The gateway ↔ product leg (spec §7 product errors, Retry, 502/504 rows): which
// answers are resent (at most 2 times, waiting Retry-After or 10 s, only with 30 s of
// the 140 s deadline left), which pass through, which become 502 upstream_error or
// 504 upstream_timeout, and that a resent request is charged once.
// A fake product counts calls; the injected sleep records waits and moves the clock.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { retryAfterSeconds } from "../../src/http/retry-after.ts";
import { createAdmission } from "../../src/product/admission.ts";
import { startUpRemainingMs } from "../../src/product/warm-up.ts";
import type { Engine } from "../../src/engine/pipeline/engine.ts";
import {
  assertNoOpenHold,
  balanceOf,
  capturesOf,
  holdsOf,
  expectError,
  gatewayHarness,
  productError,
  productPng,
  recordingSleep,
  scriptedProduct,
  TINY_PNG,
  type GatewayHarness,
  type ProductStep,
} from "./helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const preview = { image_file: TINY_PNG, size: "preview" };

function setup(...steps: ProductStep[]) {
  const product = scriptedProduct(...steps);
  const sleep = recordingSleep(g.clock);
  const v = g.variant({ product: product.fn, sleep: sleep.fn });
  return { product, sleep, v };
}

const RESENDABLE_503 = [
  "deadline_unreachable",
  "queue_full",
  "shutting_down",
  "service_not_ready",
  "receive_budget_exhausted",
  "model_unavailable",
  "circuit_open",
];

describe("resent: rejections before processing", () => {
  for (const code of RESENDABLE_503) {
    test(`503 ${code}: resent after Retry-After, charged once`, async () => {
      const c = await g.h.customer({ creditKrw: 1000 });
      const { product, sleep, v } = setup(
        () => productError(503, code, 3),
        () => productError(503, code, 5),
        () => productPng(),
      );
      const res = await v.removebg(c.liveKey, preview);
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
      assert.equal(product.calls, 3);
      assert.deepEqual(sleep.waits, [3000, 5000]);
      assert.equal(res.headers.get("x-pd-charged-krw"), "22");
      assert.deepEqual(await capturesOf(g.h, res.headers.get("x-pd-request-id")!), [22], "one capture");
      const holds = await holdsOf(g.h, c.orgId);
      assert.deepEqual(holds.map((h) => [h.amount_krw, h.state, h.captured_krw]), [[22, "captured", 22]], "one hold, captured once");
      assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 978, availableKrw: 978 });
      await assertNoOpenHold(g.h, c.orgId);
    });
  }

  test("at most 2 resends; the last answer is passed through with its Retry-After", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, sleep, v } = setup(() => productError(503, "deadline_unreachable", 7));
    const e = await expectError(await v.removebg(c.liveKey, preview), 503, "deadline_unreachable");
    assert.equal(e.retryAfter, "7");
    assert.equal(product.calls, 3);
    assert.deepEqual(sleep.waits, [7000, 7000]);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("429 key_queue_full is resent, then passed through with Retry-After", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, sleep, v } = setup(() => productError(429, "key_queue_full", 4));
    const e = await expectError(await v.removebg(c.liveKey, preview), 429, "key_queue_full");
    assert.equal(e.retryAfter, "4");
    assert.equal(product.calls, 3);
    assert.deepEqual(sleep.waits, [4000, 4000]);
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("without Retry-After the gateway waits 10 s", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, sleep, v } = setup(() => productError(503, "queue_full"), () => productPng());
    const res = await v.removebg(c.liveKey, preview);
    assert.equal(res.status, 200);
    assert.equal(product.calls, 2);
    assert.deepEqual(sleep.waits, [10_000]);
  });

  test("a connection error is resent; after 2 resends it is 502 upstream_error", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, sleep, v } = setup(() => {
      throw new TypeError("fetch failed: ECONNREFUSED");
    });
    const e = await expectError(await v.removebg(c.liveKey, preview), 502, "upstream_error");
    assert.equal(product.calls, 3);
    assert.deepEqual(sleep.waits, [10_000, 10_000]);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
    const row = await g.h.admin("GET", `/requests/${e.requestId}`);
    assert.deepEqual([row.json.status, row.json.errorCode, row.json.attempts], [502, "upstream_error", 3]);
  });

  test("a connection error then success: charged once, logged with its attempts", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, v } = setup(
      () => Promise.reject(new Error("socket hang up")),
      () => productPng(),
    );
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG });
    assert.equal(res.status, 200);
    const id = res.headers.get("x-pd-request-id")!;
    assert.equal(product.calls, 2);
    assert.deepEqual(await capturesOf(g.h, id), [22]);
    const row = await g.h.admin("GET", `/requests/${id}`);
    assert.deepEqual([row.json.attempts, row.json.chargedKrw], [2, 22]);
  });

  test("every resend carries the same request ID and the deadline of the first receipt", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const start = g.clock.now();
    const { product, v } = setup(() => productError(503, "service_not_ready", 10), () => productPng());
    const res = await v.removebg(c.liveKey, preview);
    assert.equal(res.status, 200);
    const [first, second] = product.seen;
    assert.equal(first!.headers.get("x-pd-request-id"), res.headers.get("x-pd-request-id"));
    assert.equal(second!.headers.get("x-pd-request-id"), res.headers.get("x-pd-request-id"));
    assert.equal(first!.headers.get("x-pd-deadline"), String(start + 140_000));
    assert.equal(second!.headers.get("x-pd-deadline"), String(start + 140_000));
  });
});

describe("no resend when less than 30 s of the deadline would remain", () => {
  test("a second wait of 60 s would leave 20 s: the answer is passed through after one resend", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, sleep, v } = setup(() => productError(503, "queue_full", 60));
    await expectError(await v.removebg(c.liveKey, preview), 503, "queue_full");
    assert.equal(product.calls, 2);
    assert.deepEqual(sleep.waits, [60_000]);
  });

  test("exactly 30 s left after the wait is enough; 29 s is not", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    // The product takes 100 s of the clock, then asks for a 10 s wait: 30 s would remain.
    const slowThenBusy: ProductStep = () => {
      g.clock.advance(100_000);
      return productError(503, "queue_full", 10);
    };
    const a = setup(slowThenBusy, () => productPng());
    assert.equal((await a.v.removebg(c.liveKey, preview)).status, 200);
    assert.equal(a.product.calls, 2);
    const b = setup(() => {
      g.clock.advance(101_000);
      return productError(503, "queue_full", 10);
    });
    await expectError(await b.v.removebg(c.liveKey, preview), 503, "queue_full");
    assert.equal(b.product.calls, 1);
    assert.deepEqual(b.sleep.waits, []);
  });
});

describe("not resent: failures after processing began, and client errors", () => {
  test("500 inference_failed is passed through once", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, sleep, v } = setup(() => productError(500, "inference_failed"));
    const e = await expectError(await v.removebg(c.liveKey, preview), 500, "inference_failed");
    assert.equal(e.retryAfter, null);
    assert.equal(product.calls, 1);
    assert.deepEqual(sleep.waits, []);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("400 from the product is passed through once, with its title", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, v } = setup(() =>
      new Response(JSON.stringify({ errors: [{ code: "invalid_parameter", title: "Image is 1 × 99999 px" }] }), {
        status: 400,
        headers: { "content-type": "application/json" },
      }),
    );
    const e = await expectError(await v.removebg(c.liveKey, preview), 400, "invalid_parameter");
    assert.equal(e.title, "Image is 1 × 99999 px");
    assert.equal(product.calls, 1);
  });

  test("a 503 code outside the resend list is not resent", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const { product, sleep, v } = setup(() => productError(503, "inference_failed", 3));
    const res = await v.removebg(c.liveKey, preview);
    assert.ok(res.status >= 500);
    assert.equal(product.calls, 1);
    assert.deepEqual(sleep.waits, []);
  });
});

describe("502 upstream_error: malformed product answers (never resent)", () => {
  const malformed: [string, ProductStep][] = [
    ["a non-JSON error page", () => new Response("<html>Internal Server Error</html>", { status: 500 })],
    ["an empty 503", () => new Response(null, { status: 503 })],
    ["200 that is not an image", () => new Response('{"ok":true}', { status: 200, headers: { "content-type": "application/json" } })],
    [
      "200 image/png whose bytes are not a PNG",
      () => new Response("GIF89a....", { status: 200, headers: { "content-type": "image/png", "x-width": "1", "x-height": "1" } }),
    ],
    [
      "200 PNG without X-Width / X-Height",
      () => new Response(TINY_PNG.slice() as Uint8Array<ArrayBuffer>, { status: 200, headers: { "content-type": "image/png" } }),
    ],
    ["an unknown error code", () => productError(500, "banana_split")],
    ["a gateway-only code", () => productError(401, "invalid_api_key")],
  ];
  for (const [name, step] of malformed) {
    test(name, async () => {
      const c = await g.h.customer({ creditKrw: 1000 });
      const { product, sleep, v } = setup(step);
      const res = await v.removebg(c.liveKey, preview);
      await expectError(res, 502, "upstream_error");
      assert.equal(res.headers.get("x-pd-charged-krw"), null);
      assert.equal(product.calls, 1);
      assert.deepEqual(sleep.waits, []);
      assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
      await assertNoOpenHold(g.h, c.orgId);
    });
  }
});

describe("504 upstream_timeout", () => {
  test("a product that never answers is abandoned at the deadline", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    let aborted = false;
    const product = scriptedProduct(
      (_req, signal) =>
        new Promise<Response>(() => {
          signal.addEventListener("abort", () => (aborted = true));
        }),
    );
    const v = g.variant({ product: product.fn, config: { DEADLINE_MS: 300 }, sleep: recordingSleep(g.clock).fn });
    const e = await expectError(await v.removebg(c.liveKey, preview), 504, "upstream_timeout");
    assert.match(e.title, /150 seconds/);
    assert.equal(product.calls, 1, "a timeout is not resent");
    assert.equal(aborted, true, "the product call was aborted");
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: 1000, availableKrw: 1000 });
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("no attempt is made once the deadline has passed during a wait", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const product = scriptedProduct(() => productError(503, "queue_full", 5), () => productPng());
    // A sleep that overshoots (a stalled event loop): the deadline passes while waiting.
    const v = g.variant({
      product: product.fn,
      sleep: async () => g.clock.advance(200_000),
    });
    await expectError(await v.removebg(c.liveKey, preview), 504, "upstream_timeout");
    assert.equal(product.calls, 1);
    await assertNoOpenHold(g.h, c.orgId);
  });
});

describe("product errors from the real product service, passed through", () => {
  function realProductVariant(o: { engine?: Engine; admission?: ReturnType<typeof createAdmission>; shuttingDown?: boolean }) {
    const sleep = recordingSleep(g.clock);
    const v = g.variant({
      sleep: sleep.fn,
      isShuttingDown: () => o.shuttingDown ?? false,
      services: { ...(o.engine ? { engine: o.engine } : {}), ...(o.admission ? { admission: o.admission } : {}) },
    });
    return { v, sleep };
  }

  test("503 deadline_unreachable when the pool could not finish in time: resent, then passed through", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    // An admission whose job estimate (200 s) is beyond any 140 s deadline.
    const admission = createAdmission({ poolSize: 1, keyQueueMax: 4, queueMax: 64, now: g.clock.now, initialJobMs: 200_000 });
    const { v, sleep } = realProductVariant({ admission });
    const e = await expectError(await v.removebg(c.liveKey, preview), 503, "deadline_unreachable");
    // Retry-After is by how much the job misses its deadline: 200 s − 140 s = 60 s. After
    // that wait 80 s remain, so one resend; it misses by 120 s, and waiting that long
    // would leave less than the 30 s a resend needs (spec §7 Retry 3).
    assert.deepEqual(sleep.waits, [60_000], "resent once, after the Retry-After");
    assert.equal(e.retryAfter, "120");
    await assertNoOpenHold(g.h, c.orgId);
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 1000);
  });

  test("429 key_queue_full with Retry-After when one key has too many requests queued", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const base = g.h.services.engine!;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const engine: Engine = {
      ...base,
      run: async (job) => {
        started++;
        await gate;
        return base.run(job);
      },
    };
    const admission = createAdmission({ poolSize: 1, keyQueueMax: 1, queueMax: 64, now: g.clock.now });
    const { v, sleep } = realProductVariant({ engine, admission });
    const first = v.removebg(c.liveKey, preview);
    while (started === 0) await new Promise((r) => setTimeout(r, 5));
    const e = await expectError(await v.removebg(c.liveKey, preview), 429, "key_queue_full");
    assert.ok(Number(e.retryAfter) >= 1, `Retry-After ${e.retryAfter}`);
    assert.equal(sleep.waits.length, 2, "resent twice");
    release();
    assert.equal((await first).status, 200);
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 1000 - 22, "only the processed call is charged");
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("503 shutting_down (Retry-After 5), model_unavailable (30), service_not_ready (what is left of a usual start)", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const base = g.h.services.engine!;
    const cases: [string, string, Parameters<typeof realProductVariant>[0]][] = [
      ["shutting_down", "5", { shuttingDown: true }],
      ["model_unavailable", "30", { engine: { ...base, state: () => ({ ...base.state(), ready: false, failed: "no model" }) } }],
    ];
    for (const [code, retryAfter, o] of cases) {
      const { v, sleep } = realProductVariant(o);
      const e = await expectError(await v.removebg(c.liveKey, preview), 503, code);
      assert.equal(e.retryAfter, retryAfter, code);
      assert.deepEqual(sleep.waits, [Number(retryAfter) * 1000, Number(retryAfter) * 1000], code);
    }
    // The product's start began when its app was built (on this test's clock); each wait
    // moves the clock, so each Retry-After is the start-up time then left, at least 1 s.
    const notReady = { engine: { ...base, state: () => ({ ...base.state(), ready: false }) } };
    const { v, sleep } = realProductVariant(notReady);
    const built = g.clock.now();
    const e = await expectError(await v.removebg(c.liveKey, preview), 503, "service_not_ready");
    const expected = (at: number) => String(retryAfterSeconds(startUpRemainingMs(at - built)));
    assert.equal(sleep.waits[0], Number(expected(built)) * 1000);
    assert.equal(e.retryAfter, expected(g.clock.now()));
    await assertNoOpenHold(g.h, c.orgId);
  });

  test("500 inference_failed when processing breaks: not resent", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const base = g.h.services.engine!;
    let runs = 0;
    const engine: Engine = {
      ...base,
      run: async () => {
        runs++;
        throw new Error("worker crashed");
      },
    };
    const { v, sleep } = realProductVariant({ engine });
    await expectError(await v.removebg(c.liveKey, preview), 500, "inference_failed");
    assert.equal(runs, 1);
    assert.deepEqual(sleep.waits, []);
    assert.equal((await balanceOf(g.h, c.orgId)).balanceKrw, 1000);
    await assertNoOpenHold(g.h, c.orgId);
  });
});
