// The Redis limiter when an answer comes back after the caller gave up on it: the
// command timeout fires while the script has already run (or runs a moment later). A
// gateway whose event loop is held up under load sees exactly this: the reply sits in
// the socket while the timer fires first. The caller is told the store is unavailable
// (503), so the permits the script took must not stay held for it until their lease
// runs out. A TCP relay between the limiter and Redis holds Redis's answers back for a
// set time, so the timing is the test's, not the machine's.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { createRedisLimiter, isLimiterUnavailable, type Limiter } from "../../src/limits/index.ts";
import { heldPermits } from "../support/permits.ts";
import { redisRelay, type RedisRelay } from "../support/redis-relay.ts";

const url = process.env.REDIS_URL;
const skip = url ? false : "REDIS_URL not set";
const prefix = `pdtest:limits:${randomUUID()}:`;

let relay: RedisRelay;
let direct: Limiter;

before(async () => {
  if (skip) return;
  relay = await redisRelay(url!);
  direct = createRedisLimiter({ url: url!, keyPrefix: prefix });
});
after(async () => {
  await direct?.close();
  await relay?.close();
});

/** Slots of `max` under `key` held by somebody right now, counted through the direct connection. */
const held = (key: string, max: number) => heldPermits(direct, key, max);

test("redis: permits whose answer came after the command timeout are given back", { skip }, async () => {
  const limiter = createRedisLimiter({ url: relay.url, keyPrefix: prefix, commandTimeoutMs: 150 });
  try {
    const org = `org-live:${randomUUID()}`;
    const global = `global:${randomUUID()}`;
    // Connected and scripts loaded, at full speed.
    assert.equal(await limiter.ping(), true);
    const warm = await limiter.acquireAll([{ key: `warm:${randomUUID()}`, max: 1, leaseMs: 1_000 }]);
    assert.ok(warm.ok);
    await warm.release();

    relay.setDelay(600);
    await assert.rejects(
      limiter.acquireAll([
        { key: org, max: 2, leaseMs: 60_000 },
        { key: global, max: 10, leaseMs: 60_000 },
      ]),
      (err) => isLimiterUnavailable(err),
    );
    // Past the late answers (the acquire's and the give-back's).
    await sleep(1_200);
    relay.setDelay(0);
    assert.equal(await held(org, 2), 0, "the org slot is free again");
    assert.equal(await held(global, 10), 0, "the global slot is free again");
  } finally {
    relay.setDelay(0);
    await limiter.close();
  }
});

test("redis: an acquire that answered in time keeps its permits (the give-back is only for a lost answer)", { skip }, async () => {
  const limiter = createRedisLimiter({ url: relay.url, keyPrefix: prefix, commandTimeoutMs: 1_000 });
  try {
    const key = `org-live:${randomUUID()}`;
    relay.setDelay(100);
    const got = await limiter.acquireAll([{ key, max: 2, leaseMs: 60_000 }]);
    assert.ok(got.ok);
    relay.setDelay(0);
    await sleep(200);
    assert.equal(await held(key, 2), 1);
    await got.release();
    assert.equal(await held(key, 2), 0);
  } finally {
    relay.setDelay(0);
    await limiter.close();
  }
});
