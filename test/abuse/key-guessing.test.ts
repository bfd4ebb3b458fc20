// Key guessing. From one address: after INVALID_KEY_LIMIT (20) bad
// keys in the window, every further bad key from it is 429 rate_limited with
// Retry-After; a missing or malformed one costs no database read, a well-formed guess
// one key lookup (statements are counted at the Db object the services share), and a
// valid key from the same address is served. From many addresses: the per-IP guard alone does not stop a
// distributed guess; the key space does (40 base62 characters ≈ 2^238), and the table
// printed at the end puts numbers on it. Keys never appear in the logs of the run.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Db } from "../../src/db/index.ts";
import { createMemoryLimiter } from "../../src/limits/index.ts";
import { expectError, gatewayHarness, randomIp, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";
import { findKeyLeaks } from "../support/key-scan.ts";

const logLines: string[] = [];
const issued: string[] = [];
const statements: string[] = [];
const table: [string, string][] = [];
let g: GatewayHarness;

/** Counts every statement sent through the services' shared Db object. */
function countStatements(db: Db): void {
  const query = db.query.bind(db);
  const transaction = db.transaction.bind(db);
  db.query = ((text: string, params?: unknown[]) => {
    statements.push(text);
    return query(text, params);
  }) as Db["query"];
  db.transaction = ((fn: (tx: Db) => Promise<unknown>) => {
    statements.push("BEGIN");
    return transaction(fn);
  }) as Db["transaction"];
}

/** Statements other than the request-log row every answer writes (see the report: one indexed INSERT). */
const reads = (list: string[]) => list.filter((s) => !/^\s*INSERT INTO request_log/i.test(s));

before(async () => {
  g = await gatewayHarness({ embedded: true, logLines });
  countStatements(g.h.services.db);
});
after(async () => {
  console.log(["\n## Key guessing", "", "| measure | value |", "|---|---|", ...table.map(([k, v]) => `| ${k} | ${v} |`)].join("\n"));
  await g?.close();
});

const image = { image_file: TINY_PNG, size: "preview" };
const guess = () => {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const b = crypto.getRandomValues(new Uint8Array(40));
  return "pd_live_" + Array.from(b, (x) => alphabet[x % 62]).join("");
};

test("one address: blocked after 20 bad keys; each blocked guess costs at most one key read, and the right key still works", async () => {
  const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
  const c = await g.h.customer({ creditKrw: 1000 });
  issued.push(c.liveKey, c.testKey);
  const ip = randomIp();
  for (let i = 0; i < 20; i++) await expectError(await v.removebg(guess(), image, { ip }), 401, "invalid_api_key");

  const from = statements.length;
  const blocked = 200;
  for (let i = 0; i < blocked; i++) {
    const e = await expectError(await v.removebg(guess(), image, { ip }), 429, "rate_limited");
    assert.match(e.retryAfter ?? "", /^[1-9]\d*$/);
  }
  const during = statements.slice(from);
  // A well-formed guess is looked up by its hash (the only way to tell it from a real
  // key); nothing else is read for it, and a missing or malformed key is not looked up.
  assert.ok(reads(during).length <= blocked, `${reads(during).length} reads for ${blocked} guesses`);
  assert.ok(reads(during).every((q) => /api_keys/.test(q)), "only key lookups");
  const beforeMalformed = statements.length;
  for (let i = 0; i < 50; i++) await expectError(await v.removebg(i % 2 ? undefined : "pd_live_nope", image, { ip }), 429, "rate_limited");
  assert.deepEqual(reads(statements.slice(beforeMalformed)), [], "no read at all for a missing or malformed key");
  table.push(
    ["bad keys before the block (one address)", "20"],
    ["blocked guesses", String(blocked)],
    ["DB reads during the block (key lookups by hash)", String(reads(during).length)],
    ["DB writes during the block (request-log rows)", String(during.length - reads(during).length)],
  );

  // Another caller's key from the same address is not refused for the guesser's sake.
  const res = await v.removebg(c.liveKey, image, { ip });
  assert.equal(res.status, 200, await res.clone().text());
  await res.arrayBuffer();
  // The window passes: the address's invalid keys are 401 again.
  g.clock.advance(61_000);
  await expectError(await v.removebg(guess(), image, { ip }), 401, "invalid_api_key");
});

test("many addresses: each gets its own 20 guesses; a distributed guess is stopped by the key space", async () => {
  const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
  const ips = Array.from({ length: 25 }, randomIp);
  let refused401 = 0;
  const from = statements.length;
  const t0 = performance.now();
  for (const ip of ips) {
    for (let i = 0; i < 20; i++) {
      await expectError(await v.removebg(guess(), image, { ip }), 401, "invalid_api_key");
      refused401++;
    }
  }
  const ms = performance.now() - t0;
  // Every guess of the distributed attacker costs one key lookup: that is the price of not blocking strangers.
  const lookups = reads(statements.slice(from)).length;
  assert.ok(lookups >= refused401, `${lookups} reads for ${refused401} guesses`);
  // And then each address is blocked in turn.
  for (const ip of ips) await expectError(await v.removebg(guess(), image, { ip }), 429, "rate_limited");

  // 62^40 keys, at most a few million issued: the chance per guess is below 2^-215.
  const log2Space = 40 * Math.log2(62);
  table.push(
    ["addresses × guesses", `${ips.length} × 20 = ${refused401}, all 401`],
    ["DB reads for them", String(lookups)],
    ["mean time per refused guess (ms, shared machine)", (ms / refused401).toFixed(2)],
    ["key space", `62^40 ≈ 2^${log2Space.toFixed(1)}`],
    ["guesses for a 50% chance at one of 10^7 keys", `≈ 2^${(log2Space - Math.log2(1e7) - 1 + Math.log2(Math.LN2 * 2)).toFixed(0)}`],
  );
});

test(
  "behind a proxy that appends to X-Forwarded-For, inventing the first address does not dodge the guard",
  async () => {
    const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
    const real = randomIp(); // what our load balancer saw and appended
    for (let i = 0; i < 20; i++) await expectError(await v.removebg(guess(), image, { ip: `${randomIp()}, ${real}` }), 401, "invalid_api_key");
    await expectError(await v.removebg(guess(), image, { ip: `${randomIp()}, ${real}` }), 429, "rate_limited");
  },
);

test(
  "IPv6: addresses of one /64 (one customer line) share the guard",
  async () => {
    const v = g.variant({ limiter: createMemoryLimiter({ now: g.clock.now }) });
    const b = crypto.getRandomValues(new Uint16Array(4));
    const prefix = `2001:db8:${b[0]!.toString(16)}:${b[1]!.toString(16)}`;
    const host = () => `${prefix}:${Array.from(crypto.getRandomValues(new Uint16Array(4)), (x) => x.toString(16)).join(":")}`;
    for (let i = 0; i < 20; i++) await expectError(await v.removebg(guess(), image, { ip: host() }), 401, "invalid_api_key");
    await expectError(await v.removebg(guess(), image, { ip: host() }), 429, "rate_limited");
  },
);

test("no key text in anything logged during the run", () => {
  assert.ok(logLines.length > 0, "the run logged something");
  assert.deepEqual(findKeyLeaks(logLines, issued), []);
});
