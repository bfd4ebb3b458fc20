// Idempotency-Key on POST /v1.0/removebg (src/gateway/idempotency.ts, DECISIONS.md):
// a replay of a call that succeeded is answered again and charged nothing (its bounds:
// idempotency-replay-bounds.test.ts); the same key for another request is 422, while the
// first still runs 409 with Retry-After; an error keeps nothing; keys are per app and live 24 hours; a client whose connection broke
// after the charge gets its image by sending the same key again.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createClient } from "../../src/client/index.ts";
import { createByteBudget } from "../../src/http/byte-budget.ts";
import { assertLogMatchesLedger, assertSettled } from "../support/money-checks.ts";
import { fixture } from "../support/harness.ts";
import { keyed, newIdempotencyKey, capturesOf, expectError, gatewayHarness, heldProduct, multipart, productError, productPng, scriptedProduct, TINY_PNG, type GatewayHarness } from "./helpers.ts";

const PRICE = 22;
const CREDIT = 1000;
const OTHER_PNG = fixture("photos/astronaut.png");

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

const newKey = newIdempotencyKey;

async function ok(res: Response) {
  assert.equal(res.status, 200, await res.clone().text());
  assert.ok((await res.arrayBuffer()).byteLength > 8, "a PNG");
  return {
    charged: res.headers.get("x-pd-charged-krw"),
    balance: res.headers.get("x-pd-balance-krw"),
    replayed: res.headers.get("idempotent-replayed"),
    requestId: res.headers.get("x-pd-request-id")!,
  };
}

async function capturesOfOrg(orgId: string): Promise<number> {
  const rows = await g.h.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries WHERE org_id = $1 AND kind = 'capture'", [orgId]);
  return rows[0]!.n;
}

describe("replays", () => {
  test("the same key and request again: the image, X-PD-Charged-KRW: 0, Idempotent-Replayed: true, one capture", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    const first = await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)));
    assert.deepEqual([first.charged, first.balance, first.replayed], [String(PRICE), String(CREDIT - PRICE), null]);
    for (let i = 0; i < 2; i++) {
      const again = await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)));
      assert.deepEqual([again.charged, again.balance, again.replayed], ["0", String(CREDIT - PRICE), "true"]);
      assert.notEqual(again.requestId, first.requestId, "each answer has its own request ID");
    }
    assert.deepEqual(await capturesOf(g.h, first.requestId), [PRICE]);
    // Each replay held the tier's price while it ran (it runs only where a first call would) and released it.
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw, s.releasedHolds], [1, CREDIT - PRICE, 2]);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("the field order and the multipart boundary do not matter; the image bytes and parameters do", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    await ok(await g.removebg(c.liveKey, { size: "preview", image_file: TINY_PNG }, keyed(key)));
    const again = await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)));
    assert.equal(again.replayed, "true");
    assert.equal(await capturesOfOrg(c.orgId), 1);
  });

  test("without a key every call is charged, as before", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }));
    await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }));
    assert.equal(await capturesOfOrg(c.orgId), 2);
  });

  test("a test key's replay does not use another free call", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    const first = await g.removebg(c.testKey, { image_file: TINY_PNG }, keyed(key));
    const left = first.headers.get("x-pd-test-remaining");
    await ok(first);
    const again = await g.removebg(c.testKey, { image_file: TINY_PNG }, keyed(key));
    assert.equal(again.headers.get("x-pd-test-remaining"), left);
    assert.equal((await ok(again)).replayed, "true");
  });
});

describe("refusals", () => {
  test("the same key with a different image or parameter: 422 idempotency_key_reused, nothing charged", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)));
    await expectError(await g.removebg(c.liveKey, { image_file: OTHER_PNG, size: "preview" }, keyed(key)), 422, "idempotency_key_reused");
    await expectError(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "small" }, keyed(key)), 422, "idempotency_key_reused");
    // The test key of the same app is another request too (it is never charged).
    await expectError(await g.removebg(c.testKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)), 422, "idempotency_key_reused");
    await assertSettled(g.h.services.db, c.orgId);
    assert.equal(await capturesOfOrg(c.orgId), 1);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("the same key while the first is running: 409 idempotency_key_in_use with Retry-After; afterwards a replay", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    const held = heldProduct();
    const v = g.variant({ product: held.fn });
    const first = v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key));
    await held.untilArrived(1);
    const busy = await expectError(await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)), 409, "idempotency_key_in_use");
    assert.equal(busy.retryAfter, "2");
    held.releaseAll();
    assert.equal((await ok(await first)).charged, String(PRICE));
    assert.equal((await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)))).replayed, "true");
    assert.equal(await capturesOfOrg(c.orgId), 1);
  });

  test("malformed keys: 400 invalid_parameter before anything is taken", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    for (const bad of ["x".repeat(256), "caf\u00e9", "tab\there", '""']) {
      await expectError(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(bad)), 400, "invalid_parameter");
    }
    assert.equal((await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed("a".repeat(255))))).charged, String(PRICE));
    assert.equal((await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed('"quoted key 1"')))).charged, String(PRICE));
    await assertSettled(g.h.services.db, c.orgId);
  });
});

describe("what a key keeps", () => {
  test("an error keeps nothing: the retry with the same key is a fresh attempt, charged once", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    const product = scriptedProduct(() => productError(500, "inference_failed"), () => productPng());
    const v = g.variant({ product: product.fn });
    await expectError(await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)), 500, "inference_failed");
    const retry = await ok(await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)));
    assert.deepEqual([retry.charged, retry.replayed], [String(PRICE), null]);
    // And a 402 keeps nothing either: after a top-up the key works.
    const poor = await g.h.customer({ creditKrw: 0 });
    const key2 = newKey();
    await expectError(await g.removebg(poor.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key2)), 402, "insufficient_credits");
    await g.h.admin("POST", `/orgs/${poor.orgId}/credit`, { amountKrw: CREDIT });
    assert.equal((await ok(await g.removebg(poor.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key2)))).charged, String(PRICE));
    for (const org of [c.orgId, poor.orgId]) {
      assert.equal((await assertSettled(g.h.services.db, org)).captures, 1);
      await assertLogMatchesLedger(g.h.services.db, org);
    }
  });

  test("keys belong to the app: the same key in another app is its own request", async () => {
    const a = await g.h.customer({ creditKrw: CREDIT });
    const b = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    assert.equal((await ok(await g.removebg(a.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)))).charged, String(PRICE));
    assert.equal((await ok(await g.removebg(b.liveKey, { image_file: OTHER_PNG, size: "preview" }, keyed(key)))).charged, String(PRICE));
  });

  test("a key lives 24 hours: after that it starts over, and purgeExpired deletes it", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)));
    g.clock.advance(24 * 3600_000 - 1000);
    assert.equal((await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)))).replayed, "true");
    g.clock.advance(2000);
    const fresh = await ok(await g.removebg(c.liveKey, { image_file: OTHER_PNG, size: "preview" }, keyed(key)));
    assert.deepEqual([fresh.charged, fresh.replayed], [String(PRICE), null]);
    g.clock.advance(24 * 3600_000 + 1);
    assert.ok((await g.h.services.idempotency.purgeExpired()) >= 1);
    const left = await g.h.services.db.query("SELECT 1 FROM idempotency_keys WHERE app_id = $1", [c.appId]);
    assert.equal(left.length, 0);
  });
});

describe("charged once under concurrency and lost answers", () => {
  test("50 concurrent requests with one key give one charge", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    // A receive budget for all 50 bodies at once, so every request reaches the key.
    const v = g.variant({ gatewayBudget: createByteBudget(1_000_000_000) });
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const res = await v.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key));
        const body = res.status === 200 ? undefined : ((await res.json()) as { errors: { code: string }[] }).errors[0]!.code;
        if (res.status === 200) await res.arrayBuffer();
        return { status: res.status, code: body, charged: res.headers.get("x-pd-charged-krw") };
      }),
    );
    const charged = answers.filter((a) => a.status === 200 && a.charged !== "0");
    assert.equal(charged.length, 1, JSON.stringify(answers));
    for (const a of answers) {
      // Replays past the key's bound (docs/DECISIONS.md, "Idempotency-Key") are refused, never charged.
      assert.ok(a.status === 200 || ["idempotency_key_in_use", "rate_limited", "idempotency_key_exhausted"].includes(a.code ?? ""), JSON.stringify(a));
    }
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw], [1, CREDIT - PRICE]);
    await assertLogMatchesLedger(g.h.services.db, c.orgId);
  });

  test("the socket dies after the headers (charged): the retry with the same key gets the image, charged once", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const key = newKey();
    const server = serve({ fetch: g.h.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((r) => server.once("listening", () => r()));
    try {
      const { port } = server.address() as AddressInfo;
      const form = new Request("http://x", { method: "POST", body: multipart({ image_file: TINY_PNG, size: "preview" }) });
      const body = new Uint8Array(await form.arrayBuffer());
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: "127.0.0.1",
            port,
            path: "/v1.0/removebg",
            method: "POST",
            headers: {
              "x-api-key": c.liveKey,
              "x-forwarded-for": g.ip,
              "idempotency-key": key,
              "content-type": form.headers.get("content-type")!,
              "content-length": body.byteLength,
            },
          },
          (res) => {
            // The headers arrived; the connection is lost before the body is read.
            res.socket.destroy();
            resolve(res.statusCode!);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
      assert.equal(status, 200);
      const retry = await ok(await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" }, keyed(key)));
      assert.deepEqual([retry.charged, retry.replayed], ["0", "true"]);
      const s = await assertSettled(g.h.services.db, c.orgId);
      assert.deepEqual([s.captures, s.balanceKrw], [1, CREDIT - PRICE]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  test("the TypeScript client sends a key, the same on its resend after a broken answer, and gets the image charged once", async () => {
    const c = await g.h.customer({ creditKrw: CREDIT });
    const seen: (string | null)[] = [];
    let broken = 0;
    const client = createClient({
      apiKey: c.liveKey,
      baseUrl: "http://gateway.test",
      sleep: async () => {},
      fetch: async (url, init) => {
        const headers = new Headers(init.headers);
        headers.set("x-forwarded-for", g.ip);
        seen.push(headers.get("idempotency-key"));
        const res = await g.h.app.request(url, { ...init, headers });
        if (broken++ > 0) return res;
        // The first answer (charged) breaks off after its headers.
        const cut = new ReadableStream({ pull: (ctl) => ctl.error(new Error("socket hang up")) });
        return new Response(cut, { status: res.status, headers: res.headers });
      },
    });
    const r = await client.removeBackground(TINY_PNG, { size: "preview" });
    assert.ok(r.bytes.byteLength > 8);
    assert.deepEqual([r.chargedKrw, r.replayed], [0, true]);
    assert.equal(seen.length, 2);
    assert.match(seen[0] ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(seen[1], seen[0], "the same key on the resend");
    // A second call gets its own key.
    await client.removeBackground(TINY_PNG, { size: "preview" });
    assert.notEqual(seen[2], seen[0]);
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.deepEqual([s.captures, s.balanceKrw], [2, CREDIT - 2 * PRICE]);
  });
});
