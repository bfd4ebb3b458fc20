// Redis limiter: the shared contract against a real Redis, its scripts on a clock the test
// moves (as the in-process limiter's is), so no assertion depends on how long the process
// was held up between two steps; plus what only a shared store can do: two limiter
// instances — two gateway processes — see one set of counts and permits, and the scripts
// read Redis's own clock when none is given. Skipped without REDIS_URL. Every run uses its
// own key namespace so parallel runs and other suites do not collide.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { createLimiter, createRedisLimiter } from "../../src/limits/index.ts";
import { runLimiterContract } from "./limiter-contract.ts";
import { redisRelay } from "../support/redis-relay.ts";

const url = process.env.REDIS_URL;
const skip = url ? false : "REDIS_URL not set";
const prefix = `pdtest:limits:${randomUUID()}:`;
const make = (o?: { handOverGraceMs?: number }) => createRedisLimiter({ url: url!, keyPrefix: prefix, ...o });

// Windows and leases of 60 s on a clock that moves only when the contract says: keys
// expire on Redis's clock, which then never overtakes the scripts' one within a test.
// For the same reason a line's places outlive their Retry-After by 10 minutes unless a
// test names its grace (the default 3 s would be real seconds for the keys holding them).
let now = 1_750_000_000_000;
runLimiterContract({
  name: "redis",
  make: (o) => createRedisLimiter({ url: url!, keyPrefix: prefix, now: () => now, handOverGraceMs: 600_000, ...o }),
  advance: async (ms) => void (now += ms),
  unit: 60_000,
  skip,
});

test("redis: without a clock given, the scripts read Redis's own, and a window's retry-after holds for any delay", { skip }, async () => {
  const l = make();
  try {
    const k = `server-clock:${randomUUID()}`;
    const W = 60_000;
    const before = performance.now();
    assert.equal((await l.hit(k, 1, W)).allowed, true);
    await sleep(20);
    const refused = await l.hit(k, 1, W);
    const elapsed = performance.now() - before;
    assert.equal(refused.allowed, false);
    // The first hit leaves W after Redis stamped it; both stamps lie within what this
    // process measured around the two calls (1 ms for Redis's whole-millisecond rounding).
    assert.ok(refused.retryAfterMs <= W && refused.retryAfterMs >= W - elapsed - 1, `retryAfterMs ${refused.retryAfterMs} after ${elapsed.toFixed(0)} ms`);
    assert.ok(refused.retryAfterMs < W, "Redis's clock moved during the 20 ms sleep");
  } finally {
    await l.close();
  }
});

test("redis: two limiter instances share window counts", { skip }, async () => {
  const a = make();
  const b = make();
  try {
    const k = `shared-hit:${randomUUID()}`;
    assert.equal((await a.hit(k, 2, 5000)).allowed, true);
    assert.deepEqual(await b.hit(k, 2, 5000), { allowed: true, remaining: 0, retryAfterMs: 0 });
    assert.equal((await a.hit(k, 2, 5000)).allowed, false);
    assert.equal((await b.isOver(k, 2, 5000)).over, true);
    assert.equal(await b.record(k, 5000), 3);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test("redis: two instances racing for an org cap of 2 get exactly 2 permits", { skip }, async () => {
  const a = make();
  const b = make();
  try {
    const org = `org:${randomUUID()}`;
    const global = `global:${randomUUID()}`;
    const attempts = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a : b).acquireAll([
        { key: org, max: 2, leaseMs: 10_000 },
        { key: global, max: 32, leaseMs: 10_000 },
      ]),
    );
    const results = await Promise.all(attempts);
    const won = results.filter((r) => r.ok);
    assert.equal(won.length, 2);
    for (const r of results) if (!r.ok) assert.equal(r.failedKey, org);
    // A permit taken through one instance is released through it and frees the slot for the other.
    for (const r of won) if (r.ok) await r.release();
    assert.ok((await b.acquire(org, 2, 1000)).ok);
    assert.ok((await a.acquire(org, 2, 1000)).ok);
    assert.equal((await b.acquire(org, 2, 1000)).ok, false);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test("redis: keys live under the prefix and expire with their window or lease", { skip }, async () => {
  const l = createLimiter({ redisUrl: url!, keyPrefix: prefix });
  const raw = new Redis(url!);
  try {
    const k = `ttl:${randomUUID()}`;
    await l.hit(k, 5, 3000);
    const p = await l.acquire(k, 1, 7000);
    assert.ok(p.ok);
    const windowTtl = await raw.pttl(`${prefix}w:${k}`);
    const permitTtl = await raw.pttl(`${prefix}p:${k}`);
    assert.ok(windowTtl > 0 && windowTtl <= 3000, `window ttl ${windowTtl}`);
    assert.ok(permitTtl > 3000 && permitTtl <= 7000, `permit ttl ${permitTtl}`);
    await p.permit.release();
    assert.equal(await raw.zcard(`${prefix}p:${k}`), 0);
  } finally {
    await l.close();
    raw.disconnect();
  }
});

test("redis: acquireAll is one command for all its permits, and the set's release one more", { skip }, async () => {
  // Counted on the limiter's own connection (the other test lanes share the server). An
  // evalsha refused with NOSCRIPT and sent again as eval with the same arguments is one.
  const relay = await redisRelay(url!);
  const l = createRedisLimiter({ url: relay.url, keyPrefix: prefix });
  const sent = relay.commands;
  const one = (from: number, to: number) => {
    const step = sent.slice(from, to).map(([name, ...args]) => [name, ...(name === "eval" || name === "evalsha" ? args.slice(1) : args)]);
    const resent = step.filter(([name, ...rest], i) => name === "eval" && step.slice(0, i).some(([n, ...r]) => n === "evalsha" && r.join("\0") === rest.join("\0")));
    return step.length - resent.length;
  };
  const probe = new Redis(url!);
  try {
    await l.ping(); // connected, so no connection set-up is counted
    const requests = ["org", "share", "global"].map((k) => ({ key: `${k}:${randomUUID()}`, max: 2, leaseMs: 5000 }));
    const t0 = sent.length;
    const set = await l.acquireAll(requests);
    const t1 = sent.length;
    assert.ok(set.ok);
    await set.release();
    const t2 = sent.length;
    const shown = (a: number, b: number) => JSON.stringify(sent.slice(a, b).map(([name]) => name));
    assert.equal(one(t0, t1), 1, `acquire: ${shown(t0, t1)}`);
    assert.equal(one(t1, t2), 1, `release: ${shown(t1, t2)}`);
    // A refusal that takes a place in line, and the hand-over to that place: one script each.
    const waiter = { id: `w:${randomUUID()}`, lane: "live" as const, promoteAfterMs: 30_000 };
    const held = await l.acquireAll(requests);
    assert.ok(held.ok);
    const t3 = sent.length;
    assert.equal((await l.acquireAll(requests.map((r) => ({ ...r, max: 1 })), waiter)).ok, false);
    const t4 = sent.length;
    await held.release();
    const t5 = sent.length;
    const handed = await l.acquireAll(requests.map((r) => ({ ...r, max: 1 })), waiter);
    const t6 = sent.length;
    assert.ok(handed.ok);
    await handed.release();
    assert.equal(one(t3, t4), 1, `refusal with a place: ${shown(t3, t4)}`);
    assert.equal(one(t5, t6), 1, `hand-over: ${shown(t5, t6)}`);
    for (const r of requests) assert.equal(await probe.zcard(`${prefix}p:${r.key}`), 0, "every permit was removed");
  } finally {
    await l.close();
    probe.disconnect();
    await relay.close();
  }
});

test("redis: the line at a cap is one for every gateway: a caller refused through one instance is first through the other", { skip }, async () => {
  const a = make();
  const b = make();
  const raw = new Redis(url!);
  try {
    const k = `shared-line:${randomUUID()}`;
    const cap = [{ key: k, max: 1, leaseMs: 10_000, releaseEveryMs: 1000 }];
    const waiter = { id: `w:${randomUUID()}`, lane: "live" as const, promoteAfterMs: 30_000 };
    const greedy = { id: `g:${randomUUID()}`, lane: "live" as const, promoteAfterMs: 30_000 };
    const holder = await a.acquireAll(cap, greedy);
    assert.ok(holder.ok);
    const refused = await a.acquireAll(cap, waiter);
    assert.equal(refused.ok, false);
    await holder.release();
    // The greedy caller sends again at once, through the other gateway: the slot is the waiter's.
    assert.equal((await b.acquireAll(cap, greedy)).ok, false);
    const got = await b.acquireAll(cap, waiter);
    assert.ok(got.ok, "the waiter, back through the other gateway, gets the slot held for it");
    await got.release();
    // Nothing of the line outlives it: the places' keys expire with their last place.
    for (const part of ["live", "test", "until"]) {
      const ttl = await raw.pttl(`${prefix}q:${part}:${k}`);
      assert.ok(ttl === -2 || (ttl > 0 && ttl <= 1000 + 3000), `${part} ttl ${ttl}`);
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
    raw.disconnect();
  }
});

test("redis: a place kept at one cap while its caller waits at the next lives as long as the new wait", { skip }, async () => {
  const l = make();
  const raw = new Redis(url!);
  try {
    const first = `first-cap:${randomUUID()}`;
    const second = `second-cap:${randomUUID()}`;
    const caps = [
      { key: first, max: 1, leaseMs: 10_000, releaseEveryMs: 1000 },
      { key: second, max: 1, leaseMs: 10_000, releaseEveryMs: 20_000 },
    ];
    const waiter = { id: `w:${randomUUID()}`, lane: "live" as const, promoteAfterMs: 30_000 };
    const holdsFirst = await l.acquire(first, 1, 10_000);
    assert.ok(holdsFirst.ok);
    const atFirst = await l.acquireAll(caps, waiter);
    assert.ok(!atFirst.ok && atFirst.failedIndex === 0 && atFirst.retryAfterMs === 1000);
    await holdsFirst.permit.release();
    const holdsSecond = await l.acquire(second, 1, 10_000);
    assert.ok(holdsSecond.ok);
    const atSecond = await l.acquireAll(caps, waiter);
    assert.ok(!atSecond.ok && atSecond.failedIndex === 1 && atSecond.retryAfterMs === 20_000);
    // Its place at the first cap now lasts 20 s + the grace, and so must the keys holding it.
    for (const part of ["live", "until"]) {
      const ttl = await raw.pttl(`${prefix}q:${part}:${first}`);
      assert.ok(ttl > 20_000, `${part} at the first cap: ttl ${ttl}`);
    }
    assert.equal((await l.acquire(first, 1, 1000)).ok, false, "the first cap's slot is still held for it");
    await holdsSecond.permit.release();
    assert.ok((await l.acquireAll(caps, waiter)).ok);
  } finally {
    await l.close();
    raw.disconnect();
  }
});
