// Refusals must be cheap: a refusal no app can be named for (no key, a
// malformed or unknown key, the invalid-key guard) is recorded by its access-log line
// only, with the request ID the client got; a refusal of a known key keeps its
// request-log row, as every call of a key does.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildApp } from "../../src/wiring/app.ts";
import { createLogger } from "../../src/wiring/logger.ts";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { expectError, gatewayHarness, postRemovebg, randomIp, TINY_PNG, type GatewayHarness } from "./helpers.ts";

let g: GatewayHarness;
const lines: string[] = [];
let app: ReturnType<typeof buildApp>["app"];
before(async () => {
  g = await gatewayHarness();
  // The same services, wired with the production logger writing into `lines`, and a
  // limiter of its own so the guard's count starts at zero.
  app = buildApp(
    { ...g.h.services, limiter: createMemoryLimiter({ now: g.clock.now }) },
    {
      operatorToken: OPERATOR_TOKEN,
      log: createLogger("info", (line) => lines.push(line)),
      isShuttingDown: () => false,
      remoteAddress: () => "127.0.0.1",
    },
  ).app;
});
after(() => g.close());

/** The access-log line of the answer with this request ID. */
function accessLine(requestId: string | null): Record<string, unknown> | undefined {
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "request" && l.requestId === requestId);
}

const row = (requestId: string | null) => g.h.services.requestLog.getRequest(requestId ?? "");

describe("refusals no app can be named for: the access line only", () => {
  test("a key-less refusal has its access line with its request ID and no request-log row", async () => {
    const e = await expectError(await postRemovebg(app, randomIp(), undefined, { image_file: TINY_PNG }), 401, "invalid_api_key");
    const line = accessLine(e.requestId);
    assert.ok(line, `an access line for ${e.requestId}`);
    assert.deepEqual([line.route, line.status, line.code], ["/v1.0/removebg", 401, "invalid_api_key"]);
    assert.equal(await row(e.requestId), null, "no request-log row");
  });

  test("a malformed key and an unknown key: access lines, no rows", async () => {
    const ip = randomIp();
    const malformed = await expectError(await postRemovebg(app, ip, "not-a-key", { image_file: TINY_PNG }), 401, "invalid_api_key");
    const unknown = await expectError(await postRemovebg(app, ip, `pd_live_${"Q".repeat(40)}`, { image_file: TINY_PNG }), 401, "invalid_api_key");
    for (const e of [malformed, unknown]) {
      assert.equal(accessLine(e.requestId)?.code, "invalid_api_key");
      assert.equal(await row(e.requestId), null);
    }
  });

  test("the invalid-key guard's refusal: access line, no row", async () => {
    const ip = randomIp();
    let guarded: Awaited<ReturnType<typeof expectError>> | undefined;
    for (let i = 0; i < 30 && !guarded; i++) {
      const res = await postRemovebg(app, ip, undefined, { image_file: TINY_PNG });
      if (res.status === 429) guarded = await expectError(res, 429, "rate_limited");
      else await res.arrayBuffer();
    }
    assert.ok(guarded, "the guard turned the address away");
    assert.equal(accessLine(guarded.requestId)?.code, "rate_limited");
    assert.equal(await row(guarded.requestId), null);
  });
});

describe("refusals of a known key keep their row", () => {
  test("400 bad parameter with a live key has its request-log row", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const e = await expectError(await postRemovebg(app, randomIp(), c.liveKey, { image_file: TINY_PNG, size: "gigantic" }), 400, "unsupported_parameter");
    assert.equal(accessLine(e.requestId)?.code, "unsupported_parameter");
    const r = await row(e.requestId);
    assert.deepEqual([r?.status, r?.errorCode, r?.orgId, r?.keyKind], [400, "unsupported_parameter", c.orgId, "live"]);
  });

  test("a suspended key's 403 has its row: the key is one we issued, so the refusal is its app's", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    await g.h.admin("POST", `/keys/${c.liveKeyId}/suspend`);
    const e = await expectError(await postRemovebg(app, randomIp(), c.liveKey, { image_file: TINY_PNG }), 403, "key_suspended");
    assert.equal(accessLine(e.requestId)?.code, "key_suspended");
    const r = await row(e.requestId);
    // Named as its app's, so the org's request list and usage show it.
    assert.deepEqual([r?.status, r?.errorCode, r?.orgId, r?.appId, r?.keyId, r?.keyKind], [403, "key_suspended", c.orgId, c.appId, c.liveKeyId, "live"]);
  });
});
