// GET /metrics: who may read it, and that real traffic moves the series the operator
// watches — requests by route/status/code, gateway and product stage times, KRW
// captured by key mode, holds released, resends by code, pool gauges read at scrape.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { register as promGlobalRegistry } from "prom-client";
import { createMetrics } from "../../src/metrics/index.ts";
import type { Engine, EngineState } from "../../src/engine/pipeline/engine.ts";
import { makeHarness, OPERATOR_TOKEN } from "../support/harness.ts";
import { gatewayHarness, productError, productPng, scriptedProduct, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { delta, parseProm, value, type Samples } from "./prom-text.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

async function scrape(app: { request: (p: string, i?: RequestInit) => Response | Promise<Response> } = g.h.app): Promise<Samples> {
  const res = await app.request("/metrics", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  assert.equal(res.status, 200);
  return parseProm(await res.text());
}

const REMOVEBG = 'route="/v1.0/removebg",method="POST"';

test("/metrics answers only the operator token, in Prometheus text format", async () => {
  const none = await g.h.app.request("/metrics");
  assert.equal(none.status, 401);
  const wrong = await g.h.app.request("/metrics", { headers: { authorization: "Bearer not-the-operator-token-000" } });
  assert.equal(wrong.status, 401);
  const ok = await g.h.app.request("/metrics", { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  assert.equal(ok.status, 200);
  assert.match(ok.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await ok.text();
  assert.match(text, /^# HELP pixeldrop_http_requests_total /m);
  assert.match(text, /^# TYPE pixeldrop_gateway_stage_duration_seconds histogram$/m);
});

test("traffic moves request counts, stage histograms and KRW captured by key mode", async () => {
  const c = await g.h.customer({ creditKrw: 1000 });
  const b = await scrape();

  const live = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
  assert.equal(live.status, 200);
  const charged = Number(live.headers.get("x-pd-charged-krw"));
  assert.ok(charged > 0);
  await live.arrayBuffer();
  const free = await g.removebg(c.testKey, { image_file: TINY_PNG });
  assert.equal(free.status, 200);
  await free.arrayBuffer();
  assert.equal((await g.removebg("pd_live_notarealkey0000000000000000", { image_file: TINY_PNG })).status, 401);
  assert.equal((await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "hd" })).status, 400);

  const a = await scrape();
  const requests = (status: number, code: string) => delta(b, a, `pixeldrop_http_requests_total{${REMOVEBG},status="${status}",code="${code}"}`);
  assert.equal(requests(200, "none"), 2);
  assert.equal(requests(401, "invalid_api_key"), 1);
  assert.equal(requests(400, "unsupported_parameter"), 1);
  assert.equal(delta(b, a, `pixeldrop_http_request_duration_seconds_count{${REMOVEBG}}`), 4);

  const gw = (stage: string) => delta(b, a, `pixeldrop_gateway_stage_duration_seconds_count{stage="${stage}"}`);
  assert.equal(gw("authenticate"), 4, "every call authenticates");
  assert.equal(gw("limits"), 2, "the two calls that got past their parameters");
  assert.equal(gw("reserve"), 1, "only the live call reserves");
  assert.equal(gw("product"), 2);
  assert.equal(gw("capture"), 1);

  for (const stage of ["queue_wait", "decode", "model_input", "inference", "compose", "encode"]) {
    assert.equal(delta(b, a, `pixeldrop_product_stage_duration_seconds_count{stage="${stage}"}`), 2, stage);
  }
  assert.ok(delta(b, a, 'pixeldrop_product_stage_duration_seconds_sum{stage="decode"}') > 0, "decode takes some time");

  assert.equal(delta(b, a, 'pixeldrop_captured_krw_total{mode="live"}'), charged);
  assert.equal(delta(b, a, 'pixeldrop_captured_krw_total{mode="test"}'), 0);
  assert.ok(a.has('pixeldrop_captured_krw_total{mode="test"}'), "a test-key success shows up as a zero charge");
});

test("a failed paid call counts a released hold; a resent attempt counts by its code", async () => {
  const c = await g.h.customer({ creditKrw: 1000 });
  const product = scriptedProduct(
    () => productError(503, "deadline_unreachable", 1),
    () => productPng(),
    () => productError(500, "inference_failed"),
  );
  const v = g.variant({ product: product.fn, sleep: async () => {} });
  const b = await scrape();
  const ok = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
  assert.equal(ok.status, 200);
  await ok.arrayBuffer();
  const failed = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
  assert.equal(failed.status, 500);
  const a = await scrape();

  assert.equal(product.calls, 3);
  assert.equal(delta(b, a, 'pixeldrop_gateway_resends_total{code="deadline_unreachable"}'), 1);
  assert.equal(delta(b, a, 'pixeldrop_gateway_resends_total{code="inference_failed"}'), 0, "failures after processing are not resent");
  assert.equal(delta(b, a, 'pixeldrop_holds_released_total{reason="error"}'), 1);
  assert.equal(delta(b, a, `pixeldrop_http_requests_total{${REMOVEBG},status="500",code="inference_failed"}`), 1);
});

test("pool gauges are read from the engine when scraped", async () => {
  let st: EngineState = { ready: true, backend: "fake", model: "fake-model", poolSize: 3, busy: 2, queued: 5 };
  const engine: Engine = {
    whenReady: async () => {},
    state: () => st,
    run: () => Promise.reject(new Error("not used")),
    dispose: async () => {},
  };
  const h = await makeHarness({ engine, embedded: true });
  try {
    const first = await scrape(h.app);
    assert.equal(value(first, "pixeldrop_pool_size"), 3);
    assert.equal(value(first, "pixeldrop_pool_busy"), 2);
    assert.equal(value(first, "pixeldrop_pool_queue_depth"), 5);
    assert.equal(value(first, "pixeldrop_pool_ready"), 1);
    assert.equal(value(first, 'pixeldrop_engine_info{backend="fake",model="fake-model"}'), 1);
    assert.equal(value(first, "pixeldrop_product_in_flight"), 0);
    st = { ...st, busy: 0, queued: 0, ready: false, backend: "webgpu" };
    const second = await scrape(h.app);
    assert.equal(value(second, 'pixeldrop_engine_info{backend="webgpu",model="fake-model"}'), 1);
    assert.notEqual(value(second, 'pixeldrop_engine_info{backend="fake",model="fake-model"}'), 1, "the old backend's series is not 1 any more");
    assert.equal(value(second, "pixeldrop_pool_busy"), 0);
    assert.equal(value(second, "pixeldrop_pool_queue_depth"), 0);
    assert.equal(value(second, "pixeldrop_pool_ready"), 0);
  } finally {
    await h.close();
  }
});

test("every service instance has its own registry; prom-client's global one stays empty", async () => {
  const one = createMetrics();
  const two = createMetrics(); // would throw "already registered" on a shared registry
  one.httpInFlight.inc();
  assert.match(await one.registry.metrics(), /^pixeldrop_http_requests_in_flight 1$/m);
  assert.match(await two.registry.metrics(), /^pixeldrop_http_requests_in_flight 0$/m);
  assert.doesNotMatch(await promGlobalRegistry.metrics(), /pixeldrop_/);
});
