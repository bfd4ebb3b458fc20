// Every error (status, code) the document lists for the public API is reachable: for
// each one a scenario below produces it through app.request(), and the answer has
// the documented status, code and only documented headers. A documented error with
// no scenario fails, and so does a scenario for an error the document does not list.
// Product-side errors come from the real in-process product service with one
// dependency faked (engine, admission, byte budget), then pass the gateway's resends.
// Embedded stores: the product status set here is one row for the whole service.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { IDEMPOTENCY_MAX_REPLAYS } from "../../src/billing/idempotency.ts";
import { fail } from "../../src/http/api-error.ts";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { buildOpenApiDocument } from "../../src/openapi/document.ts";
import type { Engine } from "../../src/engine/pipeline/engine.ts";
import { createProductApp } from "../../src/product/app.ts";
import type { Admission } from "../../src/product/admission.ts";
import type { Services } from "../../src/wiring/services.ts";
import { ourHeaders } from "./contract.ts";
import {
  expectError,
  gatewayHarness,
  heldProduct,
  productError,
  randomIp,
  recordingSleep,
  TINY_PNG,
  type GatewayHarness,
  type VariantOptions,
} from "../gateway/helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true });
});
after(() => g.close());

const image = { image_file: TINY_PNG, size: "preview" };
const unknownLive = () => `pd_live_${"0".repeat(32)}${crypto.randomUUID().replace(/-/g, "")}`;

type Scenario = () => Promise<Response>;

// ---- building blocks -----------------------------------------------------------

const funded = () => g.h.customer({ creditKrw: 1000 });

/** A variant whose resends wait on the test clock instead of real time. */
function resending(o: VariantOptions) {
  return g.variant({ sleep: recordingSleep(g.clock).fn, ...o });
}

/** The real product service with one of its dependencies replaced. */
function productWith(services: Partial<Services>, o: VariantOptions = {}) {
  return resending({ services, ...o });
}

const engine = (): Engine => g.h.services.engine!;
const engineIn = (state: { ready: boolean; failed?: string }): Engine => ({
  ...engine(),
  state: () => ({ ...engine().state(), ...state }),
});
const admissionRefusing = (code: "key_queue_full" | "queue_full" | "deadline_unreachable"): Admission => ({
  admit: () => fail(code, undefined, 3),
  stats: () => ({ inFlight: 0, queued: 0, queuedLive: 0, queuedTest: 0, running: 0, avgJobMs: 1000, jobMsByTier: { preview: 1000, full: 1000 } }),
  calibrate: () => {},
  retune: () => {},
});

async function withProductStatus(status: string, run: () => Promise<Response>): Promise<Response> {
  assert.equal((await g.h.admin("PUT", "/product", { status })).status, 200);
  try {
    return await run();
  } finally {
    assert.equal((await g.h.admin("PUT", "/product", { status: "available" })).status, 200);
  }
}

async function suspendedKey(): Promise<string> {
  const c = await funded();
  assert.equal((await g.h.admin("POST", `/keys/${c.liveKeyId}/suspend`)).status, 200);
  return c.liveKey;
}

/** An address the invalid-key guard has blocked. */
async function blockedIp(): Promise<string> {
  const ip = randomIp();
  for (let i = 0; i < g.h.config.INVALID_KEY_LIMIT; i++) await g.removebg(unknownLive(), image, { ip });
  return ip;
}

const thrown = (err: Error) => () => Promise.reject(err);
const storeDown = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

// ---- scenarios, by operationId and error code -----------------------------------

const SCENARIOS: Record<string, Record<string, Scenario>> = {
  removeBackground: {
    invalid_parameter: async () => g.removebg((await funded()).liveKey, { size: "preview" }),
    unsupported_parameter: async () => g.removebg((await funded()).liveKey, { ...image, size: "huge" }),
    invalid_api_key: async () => g.removebg(undefined, image),
    insufficient_credits: async () => g.removebg((await g.h.customer()).liveKey, image),
    key_suspended: async () => g.removebg(await suspendedKey(), image),
    product_not_enabled: async () => g.removebg((await g.h.customer({ creditKrw: 1000, productEnabled: false })).liveKey, image),
    refund_pending: async () => {
      const c = await funded();
      await g.h.admin("PATCH", `/orgs/${c.orgId}`, { refundPending: true });
      return g.removebg(c.liveKey, image);
    },
    product_discontinued: async () => {
      const c = await funded();
      return withProductStatus("discontinued", async () => g.removebg(c.liveKey, image));
    },
    file_too_large: async () => {
      const c = await funded();
      return g.h.app.request("/v1.0/removebg", {
        method: "POST",
        body: new Uint8Array(12_000_001),
        headers: { "x-api-key": c.liveKey, "x-forwarded-for": g.ip, "content-type": "multipart/form-data; boundary=b", "content-length": "12000001" },
      });
    },
    // An invalid key from an address past the invalid-key limit (a valid key from it is served).
    rate_limited: async () => g.removebg(unknownLive(), image, { ip: await blockedIp() }),
    daily_limit_reached: async () => {
      const c = await funded();
      await g.h.admin("PATCH", `/orgs/${c.orgId}`, { dailyLimitKrw: 0 });
      return g.removebg(c.liveKey, image);
    },
    monthly_limit_reached: async () => {
      const c = await funded();
      await g.h.admin("PATCH", `/apps/${c.appId}`, { monthlyLimitKrw: 0 });
      return g.removebg(c.liveKey, image);
    },
    test_quota_exceeded: async () => {
      // One test call at a time: the second, while the first is in the product, is refused.
      const held = heldProduct();
      const v = g.variant({ product: held.fn });
      const c = await g.h.customer({ live: false });
      const first = v.removebg(c.testKey, image);
      await held.untilArrived(1);
      const second = await v.removebg(c.testKey, image);
      held.releaseAll();
      await (await first).arrayBuffer();
      return second;
    },
    key_queue_full: async () => productWith({ admission: admissionRefusing("key_queue_full") }).removebg((await funded()).liveKey, image),
    inference_failed: async () =>
      productWith({ engine: { ...engine(), run: () => Promise.reject(new Error("worker crashed")) } }).removebg((await funded()).liveKey, image),
    // A bug in the key lookup (the product's sale switch is read in the same statement).
    internal_error: async () =>
      g.variant({ services: { keys: { ...g.h.services.keys, lookup: thrown(new Error("a bug")) } } }).removebg((await funded()).liveKey, image),
    upstream_error: async () =>
      g.variant({ product: async () => new Response("<html>gateway error</html>", { status: 200, headers: { "content-type": "text/html" } }) }).removebg(
        (await funded()).liveKey,
        image,
      ),
    service_unavailable: async () => {
      const c = await funded();
      return withProductStatus("maintenance", async () => g.removebg(c.liveKey, image));
    },
    gateway_busy: async () => {
      const c = await funded();
      return g.variant({ gatewayBudget: createByteBudget(1000) }).app.request("/v1.0/removebg", {
        method: "POST",
        body: new Uint8Array(2000),
        headers: { "x-api-key": c.liveKey, "x-forwarded-for": g.ip, "content-type": "multipart/form-data; boundary=b", "content-length": "2000" },
      });
    },
    deadline_unreachable: async () => productWith({ admission: admissionRefusing("deadline_unreachable") }).removebg((await funded()).liveKey, image),
    queue_full: async () => productWith({ admission: admissionRefusing("queue_full") }).removebg((await funded()).liveKey, image),
    shutting_down: async () => productWith({}, { isShuttingDown: () => true }).removebg((await funded()).liveKey, image),
    service_not_ready: async () => productWith({ engine: engineIn({ ready: false }) }).removebg((await funded()).liveKey, image),
    // Only a product behind HTTP (PRODUCT_URL) receives the body a second time; in one
    // process the gateway hands it the parsed job.
    receive_budget_exhausted: async () => {
      const s = g.h.services;
      const overHttp = createProductApp({ engine: engine(), admission: s.admission!, receiveBudget: createByteBudget(0), now: s.now, defaultDeadlineMs: s.config.DEADLINE_MS, isShuttingDown: () => false });
      return resending({ product: async (req) => overHttp.fetch(req) }).removebg((await funded()).liveKey, image);
    },
    model_unavailable: async () =>
      productWith({ engine: engineIn({ ready: false, failed: "model file missing" }) }).removebg((await funded()).liveKey, image),
    idempotency_key_in_use: async () => {
      // The first request with the key is still in the product.
      const held = heldProduct();
      const v = g.variant({ product: held.fn });
      const c = await funded();
      const keyed = { headers: { "idempotency-key": "in-use" } };
      const first = v.removebg(c.liveKey, image, keyed);
      await held.untilArrived(1);
      const second = await v.removebg(c.liveKey, image, keyed);
      held.releaseAll();
      await (await first).arrayBuffer();
      return second;
    },
    idempotency_key_reused: async () => {
      const c = await funded();
      await (await g.removebg(c.liveKey, image, { headers: { "idempotency-key": "reused" } })).arrayBuffer();
      return g.removebg(c.liveKey, { ...image, size: "small" }, { headers: { "idempotency-key": "reused" } });
    },
    idempotency_key_exhausted: async () => {
      const c = await funded();
      const keyed = { headers: { "idempotency-key": "exhausted" } };
      for (let i = 0; i <= IDEMPOTENCY_MAX_REPLAYS; i++) await (await g.removebg(c.liveKey, image, keyed)).arrayBuffer();
      return g.removebg(c.liveKey, image, keyed);
    },
    upstream_timeout: async () => {
      // The product refuses; the wait before the resend outlasts the deadline.
      const v = g.variant({ product: async () => productError(503, "queue_full", 5), sleep: async () => g.clock.advance(200_000) });
      return v.removebg((await funded()).liveKey, image);
    },
  },
  getAccount: {
    invalid_api_key: async () => g.account(undefined),
    key_suspended: async () => g.account(await suspendedKey()),
    rate_limited: async () => g.account(unknownLive(), { ip: await blockedIp() }),
    internal_error: async () =>
      g.variant({ services: { billing: { ...g.h.services.billing, balances: thrown(new Error("a bug")) } } }).account((await funded()).liveKey),
    service_unavailable: async () =>
      g.variant({ services: { billing: { ...g.h.services.billing, balances: thrown(storeDown()) } } }).account((await funded()).liveKey),
  },
};

// ---- the checks ----------------------------------------------------------------

interface DocumentedError {
  status: number;
  code: string;
  headers: Set<string>;
}

function documentedErrors(operationId: string): DocumentedError[] {
  for (const item of Object.values(buildOpenApiDocument().paths)) {
    for (const op of Object.values(item) as any[]) {
      if (op.operationId !== operationId) continue;
      const out: DocumentedError[] = [];
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        const examples = r.content?.["application/json"]?.examples;
        if (!examples) continue;
        const headers = new Set(Object.keys(r.headers ?? {}).map((h) => h.toLowerCase()));
        for (const code of Object.keys(examples)) out.push({ status: Number(status), code, headers });
      }
      return out;
    }
  }
  throw new Error(`operation ${operationId} is not documented`);
}

/** Headers of ours on an answer: X-…, Retry-After, WWW-Authenticate, Allow. */

for (const [operationId, scenarios] of Object.entries(SCENARIOS)) {
  describe(`${operationId}: every documented error is reachable`, () => {
    const documented = documentedErrors(operationId);

    test("the document lists errors and every scenario is for a documented one", () => {
      assert.ok(documented.length > 0);
      const listed = new Set(documented.map((d) => d.code));
      assert.deepEqual(Object.keys(scenarios).filter((code) => !listed.has(code)), [], "scenarios for undocumented errors");
    });

    for (const d of documented) {
      test(`${d.status} ${d.code}`, async () => {
        const scenario = scenarios[d.code];
        assert.ok(scenario, `no scenario produces the documented ${d.status} ${d.code}: add one to SCENARIOS`);
        const res = await scenario();
        const undocumented = ourHeaders(res).filter((h) => !d.headers.has(h));
        await expectError(res, d.status, d.code);
        assert.deepEqual(undocumented, [], `headers on ${d.status} ${d.code} that the document does not list`);
      });
    }
  });
}
