// One request, one parse: in one process the gateway hands the
// parsed job to the product's runner. What must not differ from the product behind
// HTTP: which refusals are resent (the one rule in src/gateway/upstream.ts), and the
// facts delivered. What must: the bytes are not counted again against the product's
// receive budget (the gateway received them once, and counted them).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { fail, type Failure } from "../../src/http/api-error.ts";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { httpProduct, viaFetch } from "../../src/gateway/product-http.ts";
import type { ProductAnswer, ProductCallInput } from "../../src/gateway/upstream.ts";
import type { JobRunner } from "../../src/product/job.ts";
import { inProcessProduct } from "../../src/wiring/in-process-product.ts";
import { gatewayHarness, productError, TINY_H, TINY_PNG, TINY_W, type GatewayHarness } from "./helpers.ts";
import { ERRORS, type ErrorCode } from "../../src/http/error-catalogue.ts";

const input: ProductCallInput = {
  job: {
    image: TINY_PNG.slice(),
    size: "preview",
    semitransparency: true,
    channels: "rgba",
    background: undefined,
    requestId: "req_test",
    deadline: Date.now() + 140_000,
    queueKey: "key_1",
    callClass: "live",
  },
  wire: { body: new Uint8Array(0), contentType: "multipart/form-data; boundary=x" },
  forcedSize: false,
};

const refusingRunner = (f: Failure): JobRunner => ({ unavailable: () => undefined, run: async () => f });
const signal = new AbortController().signal;

/** The same refusal, handed over in process and answered over HTTP. */
async function bothWays(code: ErrorCode, retryAfter?: number): Promise<[ProductAnswer, ProductAnswer]> {
  const inProcess = await inProcessProduct(refusingRunner(fail(code, code, retryAfter)))(input, signal);
  const overHttp = await httpProduct(viaFetch(async () => productError(ERRORS[code].status, code, retryAfter)))(input, signal);
  return [inProcess, overHttp];
}

describe("in process and over HTTP: the same resend rule", () => {
  const cases: [ErrorCode, boolean][] = [
    ["queue_full", true],
    ["key_queue_full", true],
    ["deadline_unreachable", true],
    ["service_not_ready", true],
    ["shutting_down", true],
    ["model_unavailable", true],
    ["invalid_parameter", false],
    ["inference_failed", false],
    ["rate_limited", false], // a gateway code from the product is never trusted
  ];
  for (const [code, resendable] of cases) {
    test(`${code}: ${resendable ? "resent" : "not resent"} either way`, async () => {
      const [a, b] = await bothWays(code, 7);
      assert.deepEqual(a, b);
      assert.equal(a.ok, false);
      if (!a.ok) assert.equal(a.resendable, resendable);
    });
  }
});

describe("the in-process call through the gateway", () => {
  let g: GatewayHarness;
  before(async () => {
    g = await gatewayHarness();
  });
  after(() => g.close());

  test("delivers and charges without touching the product's receive budget", async () => {
    // A product budget of one byte: over HTTP every call would be refused
    // (receive_budget_exhausted); in process nothing is received a second time.
    const v = g.variant({ services: { productBudget: createByteBudget(1) } });
    const c = await g.h.customer({ creditKrw: 1000 });
    const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "full" });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual([res.headers.get("x-width"), res.headers.get("x-height")], [String(TINY_W), String(TINY_H)]);
    assert.ok(Number(res.headers.get("x-pd-charged-krw")) > 0);
    for (const h of ["x-foreground-top", "x-foreground-left", "x-foreground-width", "x-foreground-height", "x-processing-ms"]) {
      assert.match(res.headers.get(h) ?? "", /^\d+$/, h);
    }
  });
});
