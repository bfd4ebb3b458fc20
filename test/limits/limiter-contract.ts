// The behaviour every Limiter implementation must show. memory-limiter.test.ts runs it
// in process, redis-limiter.test.ts against a real Redis; both on a clock the harness
// moves (advance), never on real time, so every retry-after is exact and no assertion
// depends on how long a step took (docs/TESTING.md). Times are in harness.unit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  LimiterUnavailableError,
  createInvalidKeyGuard,
  type Limiter,
  type Permit,
} from "../../src/limits/index.ts";

export interface ContractHarness {
  name: string;
  /** A fresh limiter (with a place in line kept `handOverGraceMs` past its Retry-After, when given). */
  make(o?: { handOverGraceMs?: number }): Limiter;
  /** Lets `ms` of the limiter's time pass (advances the clock it was made with). */
  advance(ms: number): Promise<void>;
  /** Window and lease length the tests use, in ms. */
  unit: number;
  /** Skip the whole suite (e.g. no REDIS_URL), with the reason. */
  skip?: string | false;
}

export function runLimiterContract(h: ContractHarness): void {
  const W = h.unit;
  // PD_TEST_STALL_MS=200 holds the process up that long in real time at every step the
  // clock moves: what a loaded machine does to a test. The contract must pass with it.
  const stallMs = Number(process.env.PD_TEST_STALL_MS ?? 0);
  const advance = stallMs > 0
    ? async (ms: number) => {
        await new Promise((r) => setTimeout(r, stallMs));
        await h.advance(ms);
      }
    : h.advance;
  // A step past an expiry.
  const m = Math.ceil(W / 5);
  const key = (what: string) => `${what}:${randomUUID()}`;
  const t = (name: string, fn: (l: Limiter) => Promise<void>, o?: { handOverGraceMs?: number }) =>
    test(`${h.name}: ${name}`, { skip: h.skip || false, timeout: 30_000 }, async () => {
      const l = h.make(o);
      try {
        await fn(l);
      } finally {
        await l.close();
      }
    });

  t("hit allows up to the limit, then refuses with a retry-after within the window", async (l) => {
    const k = key("hit");
    assert.deepEqual(await l.hit(k, 3, W), { allowed: true, remaining: 2, retryAfterMs: 0 });
    assert.deepEqual(await l.hit(k, 3, W), { allowed: true, remaining: 1, retryAfterMs: 0 });
    assert.deepEqual(await l.hit(k, 3, W), { allowed: true, remaining: 0, retryAfterMs: 0 });
    const refused = await l.hit(k, 3, W);
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= W, `retryAfterMs ${refused.retryAfterMs}`);
    assert.equal(refused.retryAfterMs, W);
  });

  t("the window slides: hits leave one by one, retry-after names the oldest one needed", async (l) => {
    const k = key("slide");
    await l.hit(k, 3, W);
    await l.hit(k, 3, W);
    await advance(W / 2);
    assert.equal((await l.hit(k, 3, W)).allowed, true);
    const full = await l.hit(k, 3, W);
    assert.equal(full.allowed, false);
    assert.ok(full.retryAfterMs <= W / 2, `first hits leave within W/2, got ${full.retryAfterMs}`);
    assert.equal(full.retryAfterMs, W / 2);

    await advance(W / 2 + m); // the first two have left, the third has not
    assert.deepEqual(await l.hit(k, 3, W), { allowed: true, remaining: 1, retryAfterMs: 0 });
    assert.deepEqual(await l.hit(k, 3, W), { allowed: true, remaining: 0, retryAfterMs: 0 });
    const again = await l.hit(k, 3, W);
    assert.equal(again.allowed, false);
    // The third hit (made at W/2) is now the one that must leave.
    assert.ok(again.retryAfterMs < W / 2, `retryAfterMs ${again.retryAfterMs}`);
    assert.equal(again.retryAfterMs, W / 2 - m);
  });

  t("refused hits are not recorded", async (l) => {
    const k = key("refused");
    await l.hit(k, 2, W);
    await l.hit(k, 2, W);
    await advance(W / 2);
    for (let i = 0; i < 5; i++) assert.equal((await l.hit(k, 2, W)).allowed, false);
    await advance(W / 2 + m);
    // Only the two allowed hits were counted, and both have left.
    assert.deepEqual(await l.hit(k, 2, W), { allowed: true, remaining: 1, retryAfterMs: 0 });
  });

  t("isOver records nothing and turns true at the limit", async (l) => {
    const k = key("isover");
    for (let i = 0; i < 5; i++) assert.deepEqual(await l.isOver(k, 2, W), { over: false, retryAfterMs: 0 });
    assert.deepEqual(await l.hit(k, 2, W), { allowed: true, remaining: 1, retryAfterMs: 0 });
    assert.equal((await l.isOver(k, 2, W)).over, false);
    assert.deepEqual(await l.hit(k, 2, W), { allowed: true, remaining: 0, retryAfterMs: 0 });
    const over = await l.isOver(k, 2, W);
    assert.equal(over.over, true);
    assert.ok(over.retryAfterMs > 0 && over.retryAfterMs <= W);
    assert.equal(over.retryAfterMs, W);
    await advance(W / 2);
    // A longer-window event keeps the key alive, so the old hits must be aged out by
    // isOver itself (not by the key expiring).
    assert.equal(await l.record(k, 10 * W), 3);
    assert.equal((await l.isOver(k, 2, W)).over, true);
    await advance(W / 2 + m);
    assert.deepEqual(await l.isOver(k, 2, W), { over: false, retryAfterMs: 0 });
    assert.equal((await l.isOver(k, 1, W)).over, true);
  });

  t("record counts events in the window without a limit and they expire", async (l) => {
    const k = key("record");
    assert.equal(await l.record(k, W), 1);
    await advance(W / 4);
    assert.equal(await l.record(k, W), 2);
    await advance(W / 4);
    assert.equal(await l.record(k, W), 3);
    // Three events, limit 2: over until the second (made at W/4) leaves, at 5W/4.
    const over = await l.isOver(k, 2, W);
    assert.equal(over.over, true);
    assert.equal(over.retryAfterMs, 3 * W / 4);
    assert.equal((await l.isOver(k, 3, W)).over, true);
    assert.equal((await l.isOver(k, 4, W)).over, false);
    // record and hit share the same log
    assert.equal((await l.hit(k, 3, W)).allowed, false);
    assert.equal((await l.hit(k, 4, W)).allowed, true);
    await advance(W + m);
    assert.equal(await l.record(k, W), 1);
  });

  t("keys are independent, and a window and a permit under one name do not mix", async (l) => {
    const a = key("a");
    const b = key("b");
    await l.hit(a, 1, W);
    assert.equal((await l.hit(a, 1, W)).allowed, false);
    assert.equal((await l.hit(b, 1, W)).allowed, true);
    const p = await l.acquire(a, 1, W);
    assert.equal(p.ok, true);
  });

  t("permits: max holders, refusal carries a retry-after of at least 1 s, release frees", async (l) => {
    const k = key("permit");
    const held: Permit[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await l.acquire(k, 3, 10 * W);
      assert.ok(r.ok, `acquire ${i}`);
      held.push(r.permit);
    }
    const refused = await l.acquire(k, 3, 10 * W);
    assert.equal(refused.ok, false);
    if (!refused.ok) assert.ok(refused.retryAfterMs >= 1000, `retryAfterMs ${refused.retryAfterMs}`);
    await held[1]!.release();
    const again = await l.acquire(k, 3, 10 * W);
    assert.ok(again.ok);
    assert.equal((await l.acquire(k, 3, 10 * W)).ok, false);
  });

  t("100 concurrent acquires never exceed max", async (l) => {
    const k = key("burst");
    const results = await Promise.all(Array.from({ length: 100 }, () => l.acquire(k, 5, 10 * W)));
    const won = results.flatMap((r) => (r.ok ? [r.permit] : []));
    assert.equal(won.length, 5);
    assert.equal(new Set(won.map((p) => p.id)).size, 5, "permit ids are distinct");
    await Promise.all(won.map((p) => p.release()));
    const second = await Promise.all(Array.from({ length: 100 }, () => l.acquire(k, 5, 10 * W)));
    assert.equal(second.filter((r) => r.ok).length, 5, "released slots are all usable again");
  });

  t("double release is harmless: it does not free someone else's slot", async (l) => {
    const k = key("double");
    const first = await l.acquire(k, 1, 10 * W);
    assert.ok(first.ok);
    await first.permit.release();
    await first.permit.release();
    const second = await l.acquire(k, 1, 10 * W);
    assert.ok(second.ok);
    await first.permit.release();
    assert.equal((await l.acquire(k, 1, 10 * W)).ok, false, "second holder keeps its slot");
    assert.equal(await first.permit.renew(), false, "a released permit cannot be renewed");
  });

  t("an expired lease frees its slot (while a longer one stays) and cannot be renewed", async (l) => {
    const k = key("lease");
    const long = await l.acquire(k, 2, 10 * W);
    const p = await l.acquire(k, 2, W);
    assert.ok(long.ok && p.ok);
    assert.equal((await l.acquire(k, 2, W)).ok, false);
    await advance(W + m);
    const q = await l.acquire(k, 2, 10 * W);
    assert.ok(q.ok, "slot of the dead holder is free again");
    assert.equal((await l.acquire(k, 2, W)).ok, false, "the long lease still holds its slot");
    assert.equal(await p.permit.renew(), false);
    await p.permit.release(); // late release of the expired lease must not free anyone's slot
    assert.equal((await l.acquire(k, 2, W)).ok, false);
  });

  t("renew extends the lease", async (l) => {
    const k = key("renew");
    const p = await l.acquire(k, 1, W);
    assert.ok(p.ok);
    await advance(W * 0.6);
    assert.equal(await p.permit.renew(), true); // now lives until 1.6 W
    await advance(W * 0.6); // 1.2 W: past the original lease
    assert.equal((await l.acquire(k, 1, W)).ok, false, "renewed lease still holds the slot");
    assert.equal(await p.permit.renew(2 * W), true); // until 3.2 W
    await advance(W + m);
    assert.equal((await l.acquire(k, 1, W)).ok, false, "renew(leaseMs) used the longer lease");
    await advance(W);
    assert.equal((await l.acquire(k, 1, W)).ok, true, "without renewal it expires");
  });

  t("acquireAll takes every permit in order and releases them together", async (l) => {
    const org = key("org");
    const global = key("global");
    const all = await l.acquireAll([
      { key: org, max: 2, leaseMs: 10 * W },
      { key: global, max: 3, leaseMs: 10 * W },
    ]);
    assert.ok(all.ok);
    assert.equal(all.permits.length, 2);
    assert.ok((await l.acquire(org, 2, W)).ok);
    assert.equal((await l.acquire(org, 2, W)).ok, false, "org slot is held by acquireAll");
    await all.release();
    await all.release(); // idempotent, like Permit.release
    const g = await Promise.all([1, 2, 3].map(() => l.acquire(global, 3, W)));
    assert.equal(g.filter((r) => r.ok).length, 3, "global slot was released");
  });

  t("acquireAll rolls back the permits taken when a later one is refused", async (l) => {
    const org = key("org");
    const global = key("global");
    const blocker = await l.acquire(global, 1, 10 * W);
    assert.ok(blocker.ok);
    const all = await l.acquireAll([
      { key: org, max: 1, leaseMs: 10 * W },
      { key: global, max: 1, leaseMs: 10 * W },
    ]);
    assert.equal(all.ok, false);
    if (!all.ok) {
      assert.equal(all.failedKey, global);
      assert.equal(all.failedIndex, 1);
      assert.ok(all.retryAfterMs >= 1000);
    }
    assert.ok((await l.acquire(org, 1, W)).ok, "org permit was given back");
  });

  t("acquireAll refused on its first key takes nothing", async (l) => {
    const test1 = key("testkey");
    const global = key("global");
    assert.ok((await l.acquire(test1, 1, 10 * W)).ok);
    const all = await l.acquireAll([
      { key: test1, max: 1, leaseMs: W },
      { key: global, max: 1, leaseMs: W },
    ]);
    assert.equal(all.ok, false);
    if (!all.ok) assert.equal(all.failedKey, test1);
    assert.ok((await l.acquire(global, 1, W)).ok);
  });

  t("acquireAll refused part-way under concurrency: never over either cap, and a refusal holds nothing", async (l) => {
    const global = key("global");
    const orgs = Array.from({ length: 10 }, () => key("org"));
    // 50 calls, 5 per org (cap 2), all under one global cap of 6.
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        l.acquireAll([
          { key: orgs[i % 10]!, max: 2, leaseMs: 10 * W },
          { key: global, max: 6, leaseMs: 10 * W },
        ]),
      ),
    );
    const won = results.filter((r) => r.ok);
    assert.equal(won.length, 6, "the global cap decides");
    for (const org of orgs) {
      const mine = results.filter((r, i) => r.ok && i % 10 === orgs.indexOf(org)).length;
      assert.ok(mine <= 2, `org cap kept (${mine})`);
    }
    // Every refused call gave its org slot back: each org has its cap free minus what winners hold.
    for (const [n, org] of orgs.entries()) {
      const holding = results.filter((r, i) => r.ok && i % 10 === n).length;
      const free = await Promise.all([1, 2].map(() => l.acquire(org, 2, W)));
      assert.equal(free.filter((r) => r.ok).length, 2 - holding, `org ${n}: only the winners hold a slot`);
    }
    for (const r of results) if (r.ok) await r.release();
    const g = await Promise.all(Array.from({ length: 6 }, () => l.acquire(global, 6, W)));
    assert.equal(g.filter((r) => r.ok).length, 6, "every global slot was given back by the sets' release");
  });

  t("acquireAll takes one key listed twice as two slots, in order", async (l) => {
    const k = key("twice");
    const one = await l.acquireAll([
      { key: k, max: 1, leaseMs: 10 * W },
      { key: k, max: 1, leaseMs: 10 * W },
    ]);
    assert.equal(one.ok, false);
    if (!one.ok) assert.deepEqual([one.failedKey, one.failedIndex], [k, 1]);
    const two = await l.acquireAll([
      { key: k, max: 2, leaseMs: 10 * W },
      { key: k, max: 2, leaseMs: 10 * W },
    ]);
    assert.ok(two.ok, "the refused set above held nothing");
    assert.equal(new Set(two.permits.map((p) => p.id)).size, 2);
    assert.equal((await l.acquire(k, 2, W)).ok, false);
    await two.release();
    assert.ok((await l.acquire(k, 2, W)).ok);
  });

  t("a set's permits renew and release one by one too; the set's release then frees only the rest", async (l) => {
    const a = key("a");
    const b = key("b");
    const set = await l.acquireAll([
      { key: a, max: 1, leaseMs: W },
      { key: b, max: 1, leaseMs: W },
    ]);
    assert.ok(set.ok);
    await advance(W * 0.6);
    assert.equal(await set.permits[0]!.renew(2 * W), true);
    await advance(W * 0.6); // past the first lease: b's slot lapsed, a's was renewed
    assert.equal((await l.acquire(a, 1, W)).ok, false, "a was renewed");
    const other = await l.acquire(b, 1, 10 * W);
    assert.ok(other.ok, "b's lease lapsed");
    await set.permits[0]!.release();
    const next = await l.acquire(a, 1, 10 * W);
    assert.ok(next.ok, "a was released on its own");
    await set.release();
    assert.equal((await l.acquire(a, 1, W)).ok, false, "the set's release did not free a's new holder");
    assert.equal((await l.acquire(b, 1, W)).ok, false, "nor b's, whose lease it had lost");
    assert.equal(await set.permits[1]!.renew(), false);
  });

  t("acquireAll of nothing holds nothing; bad arguments are refused before anything is taken", async (l) => {
    const none = await l.acquireAll([]);
    assert.ok(none.ok);
    assert.equal(none.permits.length, 0);
    await none.release();
    const k = key("bad");
    await assert.rejects(
      l.acquireAll([
        { key: k, max: 1, leaseMs: W },
        { key: key("x"), max: 0, leaseMs: W },
      ]),
      RangeError,
    );
    assert.ok((await l.acquire(k, 1, W)).ok, "the valid first request took nothing");
  });

  t("invalid-key guard refuses the 21st invalid key and lets the IP back after the window", async (l) => {
    const guard = createInvalidKeyGuard(l, { limit: 20, windowMs: W });
    const ip = `203.0.113.${Math.floor(Math.random() * 250)}-${randomUUID()}`;
    const other = `2001:db8::${randomUUID()}`;
    for (let i = 1; i <= 20; i++) assert.deepEqual(await guard.invalidKey(ip), { over: false }, `invalid key ${i}`);
    const blocked = await guard.invalidKey(ip);
    assert.equal(blocked.over, true);
    const retryAfterS = blocked.over ? blocked.retryAfterS : 0;
    assert.ok(retryAfterS >= 1 && retryAfterS <= Math.max(1, Math.ceil(W / 1000)));
    assert.equal(retryAfterS, Math.ceil(W / 1000));
    assert.deepEqual(await guard.invalidKey(other), { over: false }, "other IPs are not affected");
    await advance(W + m);
    assert.deepEqual(await guard.invalidKey(ip), { over: false });
  });

  t("bad arguments are programming errors", async (l) => {
    await assert.rejects(l.hit(key("x"), 0, W), RangeError);
    await assert.rejects(l.hit(key("x"), 1, 1.5), RangeError);
    await assert.rejects(l.acquire(key("x"), 0, W), RangeError);
    await assert.rejects(l.record(key("x"), -1), RangeError);
  });

  // The fair hand-over at a full cap (src/limits/waiting-line.ts). Retry-After here
  // depends only on the places and slots counted, never on the clock, so it is exact
  // for both implementations.
  const live = (id: string, promoteAfterMs = 100 * W) => ({ id: `${id}:${randomUUID()}`, lane: "live" as const, promoteAfterMs });
  const testLane = (id: string, promoteAfterMs: number) => ({ id: `${id}:${randomUUID()}`, lane: "test" as const, promoteAfterMs });
  const refusedIn = (r: Awaited<ReturnType<Limiter["acquireAll"]>>) => {
    assert.equal(r.ok, false, "refused");
    return r.ok ? -1 : r.retryAfterMs;
  };

  t("hand-over: a freed slot is held for the caller refused first; a newcomer and a call naming no caller are refused", async (l) => {
    const k = key("handover");
    const cap = [{ key: k, max: 2, leaseMs: 10 * W, releaseEveryMs: 1000 }];
    const holders = [await l.acquire(k, 2, 10 * W), await l.acquire(k, 2, 10 * W)];
    const a = live("a");
    const b = live("b");
    assert.equal(refusedIn(await l.acquireAll(cap, a)), 1000, "first in line: one release away");
    if (holders[0]!.ok) await holders[0]!.permit.release();
    assert.equal(refusedIn(await l.acquireAll(cap, b)), 1000, "the freed slot is a's; b waits for the next release");
    assert.equal((await l.acquire(k, 2, 10 * W)).ok, false, "a call naming no caller goes after every place");
    const got = await l.acquireAll(cap, a);
    assert.ok(got.ok, "a, coming back, gets the slot held for it");
    assert.equal(refusedIn(await l.acquireAll(cap, b)), 1000, "cap full again: b is still first in line");
    if (holders[1]!.ok) await holders[1]!.permit.release();
    assert.ok((await l.acquireAll(cap, b)).ok, "b gets the next freed slot");
    assert.equal((await l.acquire(k, 2, W)).ok, false);
    await got.release();
    assert.ok((await l.acquire(k, 2, W)).ok, "with nobody in line, anyone may take a freed slot");
  });

  t("hand-over: first refused, first served; a caller coming back early keeps its place; Retry-After counts the releases ahead", async (l) => {
    const k = key("order");
    const cap = (releaseEveryMs: number) => [{ key: k, max: 1, leaseMs: 10 * W, releaseEveryMs }];
    const holder = await l.acquire(k, 1, 10 * W);
    assert.ok(holder.ok);
    const [a, b, c] = [live("a"), live("b"), live("c")];
    assert.equal(refusedIn(await l.acquireAll(cap(1500), a)), 2000, "1 release × 1.5 s, whole seconds");
    assert.equal(refusedIn(await l.acquireAll(cap(1500), b)), 3000, "2 releases × 1.5 s");
    assert.equal(refusedIn(await l.acquireAll(cap(1500), c)), 5000, "3 releases × 1.5 s = 4.5, rounded up");
    assert.equal(refusedIn(await l.acquireAll(cap(1500), a)), 2000, "a asked again too early: refused, still first");
    assert.equal(refusedIn(await l.acquireAll(cap(1500), b)), 3000, "b did not move");
    assert.equal(refusedIn(await l.acquireAll(cap(1500), { ...c, maxRetryAfterMs: 2000 })), 2000, "never past the longest wait given");
    await holder.permit.release();
    assert.equal(refusedIn(await l.acquireAll(cap(1500), c)), 3000, "c: the slot is a's, b is next");
    assert.equal(refusedIn(await l.acquireAll(cap(1500), b)), 2000);
    const ga = await l.acquireAll(cap(1500), a);
    assert.ok(ga.ok, "a first");
    await ga.release();
    assert.equal(refusedIn(await l.acquireAll(cap(1500), c)), 2000);
    const gb = await l.acquireAll(cap(1500), b);
    assert.ok(gb.ok, "then b");
    await gb.release();
    assert.ok((await l.acquireAll(cap(1500), c)).ok, "then c");
  });

  t(
    "hand-over: a place lapses when its caller does not come back within Retry-After plus the grace",
    async (l) => {
      const k = key("lapse");
      const cap = [{ key: k, max: 1, leaseMs: 10 * W, releaseEveryMs: 1000 }];
      const holder = await l.acquire(k, 1, 10 * W);
      assert.ok(holder.ok);
      assert.equal(refusedIn(await l.acquireAll(cap, live("gone"))), 1000);
      // A second place, told to come back much later, keeps the line itself alive.
      const stays = live("stays");
      assert.equal(refusedIn(await l.acquireAll([{ ...cap[0]!, releaseEveryMs: 10_000 }], stays)), 20_000);
      await holder.permit.release();
      assert.equal((await l.acquire(k, 1, W)).ok, false, "the freed slot is held for the caller in line");
      await advance(1000 + W + m);
      assert.equal((await l.acquire(k, 1, W)).ok, false, "now held for the second place");
      const next = await l.acquireAll(cap, stays);
      assert.ok(next.ok, "the first place lapsed: the caller behind it is first");
      await next.release();
      await advance(20_000);
      assert.ok((await l.acquire(k, 1, W)).ok, "the line is empty once every place lapsed or was served");
    },
    { handOverGraceMs: W },
  );

  t(
    "hand-over: live places go first; a test place goes before them once it has waited promoteAfterMs",
    async (l) => {
      const k = key("lanes");
      const P = 4 * W;
      const cap = [{ key: k, max: 1, leaseMs: 10 * W, releaseEveryMs: 1000 }];
      const holder = await l.acquire(k, 1, 10 * W);
      assert.ok(holder.ok);
      const tester = testLane("t", P);
      const payer = live("l", P);
      assert.equal(refusedIn(await l.acquireAll(cap, tester)), 1000, "nobody ahead: one release");
      assert.equal(refusedIn(await l.acquireAll(cap, payer)), 1000, "the live place goes before the test place");
      const told = refusedIn(await l.acquireAll(cap, tester));
      // Live places ahead: come back one release after the promotion (P + 1 s, less the ms gone by).
      assert.equal(told, P + 1000, "the test caller is told to come back once promoted");
      await holder.permit.release();
      assert.equal(refusedIn(await l.acquireAll(cap, tester)) >= P, true, "still behind the live place");
      const paid = await l.acquireAll(cap, payer);
      assert.ok(paid.ok, "paid call first");
      const later = live("l2", P);
      assert.equal(refusedIn(await l.acquireAll(cap, later)), 1000, "a newer live caller is still ahead of the test place");
      await advance(P + m);
      assert.equal(refusedIn(await l.acquireAll(cap, later)), 2000, "after promoteAfterMs the test place goes first");
      await paid.release();
      assert.equal(refusedIn(await l.acquireAll(cap, later)), 1000);
      const free = await l.acquireAll(cap, tester);
      assert.ok(free.ok, "the test caller that waited gets the slot");
      await free.release();
      assert.ok((await l.acquireAll(cap, later)).ok);
    },
    { handOverGraceMs: 8 * W },
  );

  t("hand-over across caps: a caller refused at the second cap holds nothing at the first and leaves every line once admitted", async (l) => {
    const org = key("org");
    const global = key("global");
    const caps = (o: string) => [
      { key: o, max: 1, leaseMs: 10 * W, releaseEveryMs: 1000 },
      { key: global, max: 1, leaseMs: 10 * W, releaseEveryMs: 1000 },
    ];
    const holder = await l.acquire(global, 1, 10 * W);
    assert.ok(holder.ok);
    const a = live("a");
    const refused = await l.acquireAll(caps(org), a);
    assert.equal(refused.ok, false);
    if (!refused.ok) assert.deepEqual([refused.failedIndex, refused.retryAfterMs], [1, 1000]);
    const orgSlot = await l.acquire(org, 1, W);
    assert.ok(orgSlot.ok, "the refusal held no org slot");
    await orgSlot.permit.release();
    await holder.permit.release();
    const otherOrg = key("other-org");
    const b = live("b");
    assert.equal(refusedIn(await l.acquireAll(caps(otherOrg), b)), 1000, "the global slot is held for a");
    const got = await l.acquireAll(caps(org), a);
    assert.ok(got.ok, "a gets it");
    await got.release();
    const gb = await l.acquireAll(caps(otherOrg), b);
    assert.ok(gb.ok, "then b");
    await gb.release();
    assert.ok((await l.acquire(global, 1, W)).ok, "a and b left the global line when admitted: nothing is held for them");
  });

  test(`${h.name}: ping is true while open; after close, calls reject as unavailable`, { skip: h.skip || false }, async () => {
    const l = h.make();
    assert.equal(await l.ping(), true);
    await l.close();
    assert.equal(await l.ping(), false);
    await assert.rejects(l.hit(key("closed"), 1, W), LimiterUnavailableError);
    await assert.rejects(l.acquire(key("closed"), 1, W), LimiterUnavailableError);
    await assert.rejects(l.acquireAll([{ key: key("closed"), max: 1, leaseMs: W }]), LimiterUnavailableError);
    await l.close(); // idempotent
  });
}
