// The operator token (docs/SECURITY.md "The operator's word"): at least 32 characters at
// boot, compared as fixed-length digests whatever its length, and wrong tokens throttled
// per client with bounded memory. The clock is the harness's; nothing here times anything.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { parseConfig, OPERATOR_TOKEN_MIN_LENGTH } from "../../src/config.ts";
import { createTokenThrottle, OPERATOR_TOKEN_GUESSES, OPERATOR_TOKEN_WINDOW_MS } from "../../src/admin/token-throttle.ts";
import { buildApp } from "../../src/wiring/app.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { expectError, gatewayHarness, randomIp, type GatewayHarness } from "../gateway/helpers.ts";

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness({ embedded: true });
});
after(() => g.close());

const call = (path: string, ip: string, token?: string) =>
  g.h.app.request(path, { headers: { "x-forwarded-for": ip, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } });

test("an OPERATOR_TOKEN shorter than 32 characters stops the start, naming the variable", () => {
  assert.equal(OPERATOR_TOKEN_MIN_LENGTH, 32);
  for (const short of ["x".repeat(16), "x".repeat(31)]) assert.throws(() => parseConfig({ OPERATOR_TOKEN: short }), /OPERATOR_TOKEN: at least 32 characters/);
  assert.equal(parseConfig({ OPERATOR_TOKEN: "x".repeat(32) }).OPERATOR_TOKEN, "x".repeat(32));
  // (src/main.ts prints this message and exits 1 before opening anything.)
  // And an app built in code (tests, embedders) is held to the same length.
  assert.throws(() => buildApp(g.h.services, { operatorToken: "x".repeat(31), log: () => {}, isShuttingDown: () => false }), /operatorToken/);
});

test("a presented token of any length is compared as one 32-byte digest against another, never cut short by its length", async () => {
  const compared: number[][] = [];
  const real = crypto.timingSafeEqual;
  crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compared.push([a.byteLength, b.byteLength]);
    return real(a, b);
  }) as typeof real;
  syncBuiltinESMExports(); // the service's `import { timingSafeEqual }` sees the spy
  try {
    const lengths = [1, OPERATOR_TOKEN.length - 1, OPERATOR_TOKEN.length, OPERATOR_TOKEN.length + 1, 500];
    for (const n of lengths) {
      const token = OPERATOR_TOKEN.padEnd(n, "x").slice(0, n);
      const res = await call("/admin/v1/product", randomIp(), token === OPERATOR_TOKEN ? `${token.slice(0, -1)}y` : token);
      await expectError(res, 401, "unauthorized");
    }
    assert.equal((await call("/admin/v1/product", randomIp(), OPERATOR_TOKEN)).status, 200);
    assert.deepEqual(compared, [...lengths, "right"].map(() => [32, 32]), "one compare per token, of two SHA-256 digests");
  } finally {
    crypto.timingSafeEqual = real;
    syncBuiltinESMExports();
  }
});

test(`wrong tokens are throttled per client: after ${OPERATOR_TOKEN_GUESSES} in a minute its tokens are not compared (429, Retry-After) until they leave the window`, async () => {
  const guesser = randomIp();
  const operator = randomIp();
  for (let i = 0; i < OPERATOR_TOKEN_GUESSES; i++) await expectError(await call("/admin/v1/product", guesser, `wrong-${i}`.padEnd(40, "x")), 401, "unauthorized");
  g.clock.advance(10_000);
  for (const path of ["/admin/v1/product", "/metrics"]) {
    for (const token of ["wrong".padEnd(40, "x"), OPERATOR_TOKEN]) {
      const e = await expectError(await call(path, guesser, token), 429, "rate_limited");
      assert.equal(e.retryAfter, String((OPERATOR_TOKEN_WINDOW_MS - 10_000) / 1000), `${path}: until the first guess leaves the window`);
    }
  }
  await expectError(await call("/admin/v1/product", guesser), 401, "unauthorized"); // no token is no guess
  // Another client is not affected, and its wrong token is compared as ever.
  assert.equal((await call("/admin/v1/product", operator, OPERATOR_TOKEN)).status, 200);
  await expectError(await call("/admin/v1/product", operator, "wrong".padEnd(40, "y")), 401, "unauthorized");
  // 150 more guesses: refused unread, and not counted, so the block ends when the first ten leave the window.
  for (let i = 0; i < 150; i++) assert.equal((await call("/admin/v1/product", guesser, `again-${i}`.padEnd(40, "x"))).status, 429);
  g.clock.advance(OPERATOR_TOKEN_WINDOW_MS - 10_000);
  assert.equal((await call("/admin/v1/product", guesser, OPERATOR_TOKEN)).status, 200);
});

test("the throttle remembers a bounded number of clients, forgetting the one longest without a wrong token first", () => {
  let t = 0;
  const throttle = createTokenThrottle(() => t, { guesses: 2, windowMs: 1000, clientsMax: 3 });
  throttle.wrong("a");
  throttle.wrong("a");
  assert.equal(throttle.blockedFor("a"), 1000);
  t = 400;
  assert.equal(throttle.blockedFor("a"), 600);
  throttle.wrong("b");
  throttle.wrong("c");
  throttle.wrong("a"); // refused in practice; counted or not, "a" is now the most recent
  throttle.wrong("d"); // four clients: "b" goes
  throttle.wrong("b");
  assert.equal(throttle.blockedFor("b"), 0, "b starts again from one");
  assert.ok(throttle.blockedFor("a") > 0, "a is still remembered");
  t = 1000;
  assert.equal(throttle.blockedFor("a"), 0, "the window passed");
});
