// Key checks of POST /v1.0/removebg (spec §5, §7 401/403/429 rows): every reason for
// 401 invalid_api_key, 403 key_suspended, and the per-IP guard against key guessing
// (429 rate_limited for an address's invalid keys; never for a valid key).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { NO_PROXY } from "../../src/http/proxy-trust.ts";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import { expectError, gatewayHarness, randomIp, TINY_PNG, type GatewayHarness } from "./helpers.ts";

const DAY = 86_400_000;
let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const image = { image_file: TINY_PNG, size: "preview" };
const unknownLive = () => "pd_live_" + "A1b2C3d4".repeat(5);

async function ok(res: Response, what: string) {
  assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
  await res.arrayBuffer();
}

describe("401 invalid_api_key", () => {
  test("missing key", async () => {
    await expectError(await g.removebg(undefined, image, { ip: randomIp() }), 401, "invalid_api_key");
    await expectError(await g.removebg("", image, { ip: randomIp() }), 401, "invalid_api_key");
  });

  test("malformed keys", async () => {
    const ip = randomIp();
    for (const key of [
      "abc",
      "pd_live_short",
      "pd_prod_" + "a".repeat(40),
      "pd_live_" + "a".repeat(39) + "!",
      "PD_LIVE_" + "a".repeat(40),
      "Bearer pd_live_" + "a".repeat(40),
    ]) {
      await expectError(await g.removebg(key, image, { ip }), 401, "invalid_api_key");
    }
  });

  test("well-formed but unknown key", async () => {
    await expectError(await g.removebg(unknownLive(), image, { ip: randomIp() }), 401, "invalid_api_key");
    await expectError(await g.removebg("pd_test_" + "Z9".repeat(20), image, { ip: randomIp() }), 401, "invalid_api_key");
  });

  test("deleted key, while the app's other key still works", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    await ok(await g.removebg(c.liveKey, image), "before delete");
    const del = await g.h.admin("DELETE", `/keys/${c.liveKeyId}`);
    assert.equal(del.status, 200);
    await expectError(await g.removebg(c.liveKey, image), 401, "invalid_api_key");
    await ok(await g.removebg(c.testKey, image), "the test key");
  });

  test("expired key: a reissued key's predecessor works for 7 days, then stops", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const re = await g.h.admin("POST", `/keys/${c.liveKeyId}/reissue`);
    assert.equal(re.status, 201);
    const newKey = re.json.key as string;
    assert.equal(Date.parse(re.json.previousValidUntil), g.clock.now() + 7 * DAY);
    g.clock.advance(7 * DAY - 1000);
    await ok(await g.removebg(c.liveKey, image), "old key just before 7 days");
    await ok(await g.removebg(newKey, image), "new key");
    g.clock.advance(1000);
    await expectError(await g.removebg(c.liveKey, image), 401, "invalid_api_key");
    await ok(await g.removebg(newKey, image), "new key after the old one expired");
  });

  test("dormant key: unused for 180 days; any use restarts the count", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    g.clock.advance(100 * DAY);
    await ok(await g.removebg(c.liveKey, image), "used on day 100");
    // Unused since creation: the test key went dormant on day 180.
    g.clock.advance(81 * DAY);
    await expectError(await g.removebg(c.testKey, image), 401, "invalid_api_key");
    await ok(await g.removebg(c.liveKey, image), "used 81 days ago");
    g.clock.advance(181 * DAY);
    await expectError(await g.removebg(c.liveKey, image), 401, "invalid_api_key");
  });
});

describe("403 key_suspended", () => {
  test("a suspended key is refused until unsuspended; the app's other key is unaffected", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    assert.equal((await g.h.admin("POST", `/keys/${c.liveKeyId}/suspend`)).status, 200);
    const e = await expectError(await g.removebg(c.liveKey, image), 403, "key_suspended");
    assert.equal(e.retryAfter, null);
    await ok(await g.removebg(c.testKey, image), "test key of the same app");
    assert.equal((await g.h.admin("POST", `/keys/${c.liveKeyId}/unsuspend`)).status, 200);
    await ok(await g.removebg(c.liveKey, image), "after unsuspend");
  });

  test("suspended keys do not count as invalid keys for the IP guard", async () => {
    const c = await g.h.customer({ creditKrw: 1000, live: false });
    await g.h.admin("POST", `/keys/${c.testKeyId}/suspend`);
    const ip = randomIp();
    for (let i = 0; i < 25; i++) await expectError(await g.removebg(c.testKey, image, { ip }), 403, "key_suspended");
  });
});

describe("429 rate_limited for repeated invalid keys from one IP", () => {
  test("after 20 invalid keys the address's invalid keys get 429; its valid keys still work; other IPs are not affected", async () => {
    const c = await g.h.customer({ creditKrw: 1000 });
    const ip = randomIp();
    for (let i = 0; i < 20; i++) await expectError(await g.removebg(unknownLive(), image, { ip }), 401, "invalid_api_key");
    const e = await expectError(await g.removebg(unknownLive(), image, { ip }), 429, "rate_limited");
    const retry = Number(e.retryAfter);
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${e.retryAfter}`);
    await expectError(await g.removebg(undefined, image, { ip }), 429, "rate_limited");
    await expectError(await g.removebg("malformed", image, { ip }), 429, "rate_limited");
    // Someone else's key from the same address (a shared NAT, an office, a proxy not named
    // in TRUST_PROXY) is not theirs to block.
    await ok(await g.removebg(c.liveKey, image, { ip }), "a valid live key from the blocked address");
    await ok(await g.removebg(c.testKey, image, { ip }), "a valid test key from the blocked address");
    await expectError(await g.removebg(unknownLive(), image, { ip }), 429, "rate_limited");
    await ok(await g.removebg(c.liveKey, image, { ip: randomIp() }), "another address");
    // The account endpoint shares the guard.
    await expectError(await g.account(unknownLive(), { ip }), 429, "rate_limited");
    assert.equal((await g.account(c.liveKey, { ip })).status, 200);
  });

  test("the block lifts when the 60 s window has passed (in-process limiter, test clock)", async () => {
    const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
    const ip = randomIp();
    for (let i = 0; i < 20; i++) {
      await expectError(await v.removebg(unknownLive(), image, { ip }), 401, "invalid_api_key");
      g.clock.advance(1000);
    }
    const e = await expectError(await v.removebg(unknownLive(), image, { ip }), 429, "rate_limited");
    // The oldest failure was 20 s ago: it leaves the window in 40 s.
    assert.equal(e.retryAfter, "40");
    g.clock.advance(39_000);
    // Refused keys are not counted, so the block does not outlast the window.
    await expectError(await v.removebg(unknownLive(), image, { ip }), 429, "rate_limited");
    g.clock.advance(1000);
    await expectError(await v.removebg(unknownLive(), image, { ip }), 401, "invalid_api_key");
  });

  test("a missing or malformed key is never looked up, blocked address or not", async () => {
    let lookups = 0;
    const keys = g.h.services.keys;
    const v = g.variant({
      services: {
        keys: {
          ...keys,
          lookup: (text) => {
            lookups++;
            return keys.lookup(text);
          },
        },
      },
    });
    const ip = randomIp();
    for (let i = 0; i < 25; i++) await v.removebg(i % 2 ? undefined : "pd_live_short", image, { ip });
    assert.equal(lookups, 0);
  });

  test("64 concurrent invalid keys from one address: exactly 20 get 401, the rest 429", async () => {
    const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
    const ip = randomIp();
    const answers = await Promise.all(Array.from({ length: 64 }, () => v.removebg(unknownLive(), image, { ip })));
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 401).length, 20, statuses.join(","));
    assert.equal(statuses.filter((s) => s === 429).length, 44);
    for (const r of answers.filter((a) => a.status === 429)) assert.ok(Number(r.headers.get("retry-after")) >= 1);
  });

  test("without TRUST_PROXY, X-Forwarded-For is ignored: inventing addresses does not dodge the guard", async () => {
    const v = g.variant({ config: { TRUST_PROXY: NO_PROXY }, limiter: createMemoryLimiter({ now: g.clock.now }) });
    for (let i = 0; i < 20; i++) await expectError(await v.removebg(unknownLive(), image, { ip: randomIp() }), 401, "invalid_api_key");
    await expectError(await v.removebg(unknownLive(), image, { ip: randomIp() }), 429, "rate_limited");
  });

  test("with TRUST_PROXY, the last X-Forwarded-For address (the one our proxy appended) is the client", async () => {
    const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
    const client = randomIp();
    for (let i = 0; i < 20; i++) {
      await expectError(await v.removebg(unknownLive(), image, { ip: `${randomIp()}, ${client}` }), 401, "invalid_api_key");
    }
    await expectError(await v.removebg(unknownLive(), image, { ip: client }), 429, "rate_limited");
    await expectError(await v.removebg(unknownLive(), image, { ip: randomIp() }), 401, "invalid_api_key");
  });
});
