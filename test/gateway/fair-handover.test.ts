// The fair hand-over at the global cap, through HTTP: a call refused at a full cap keeps
// its key a place in line, the slot freed next is held for it, and a caller that sends
// again at once (or a newcomer) is refused until the waiting one has come back. Test
// keys wait behind live ones. Both limiters: the in-process one and, with REDIS_URL,
// Redis under a prefix of this file's own (the "global" permit set is otherwise shared
// with every suite on the server).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createMemoryLimiter, createRedisLimiter, type Limiter } from "../../src/limits/index.ts";
import { expectError, gatewayHarness, heldProduct, TINY_PNG, type GatewayHarness } from "./helpers.ts";

const preview = { image_file: TINY_PNG, size: "preview" };

let g: GatewayHarness;
before(async () => {
  g = await gatewayHarness();
});
after(() => g.close());

async function ok(res: Response | Promise<Response>, what: string): Promise<void> {
  const r = await res;
  assert.equal(r.status, 200, `${what}: ${await r.clone().text()}`);
  await r.arrayBuffer();
}

const limiters: { name: string; skip: string | false; make: () => Limiter }[] = [
  { name: "in-process limiter", skip: false, make: () => createMemoryLimiter({ now: g.clock.now }) },
  {
    name: "Redis limiter",
    skip: process.env.REDIS_URL ? false : "REDIS_URL not set",
    make: () => createRedisLimiter({ url: process.env.REDIS_URL!, keyPrefix: `pdtest:handover:${randomUUID()}:` }),
  },
];

for (const l of limiters) {
  describe(`fair hand-over at the global cap (${l.name})`, { skip: l.skip }, () => {
    // A call that should have been refused but got in waits in the held product: the
    // timeout makes that a failure now rather than at the 140 s deadline.
    test("the caller refused first gets the freed slot; the caller that held it and a newcomer are refused meanwhile", { timeout: 30_000 }, async () => {
      const limiter = l.make();
      const product = heldProduct();
      try {
        const v = g.variant({ product: product.fn, config: { GLOBAL_CONCURRENCY: 2 }, limiter });
        const [a, b, waiter, newcomer] = await Promise.all([1, 2, 3, 4].map(() => g.h.customer({ creditKrw: 1000 })));
        const holders = [a!, b!];
        const running = holders.map((c) => Promise.resolve(v.removebg(c.liveKey, preview)));
        await product.untilArrived(2);
        const refused = await expectError(await v.removebg(waiter!.liveKey, preview), 429, "rate_limited");
        assert.ok(Number(refused.retryAfter) >= 1);
        product.releaseOldest();
        const done = await Promise.race(running.map((r, i) => r.then(() => i)));
        await ok(running[done]!, "the first holder's call");
        const greedy = holders[done]!;
        // It sends again at once, as a closed-loop client does: the slot is the waiter's.
        await expectError(await v.removebg(greedy.liveKey, preview), 429, "rate_limited");
        await expectError(await v.removebg(newcomer!.liveKey, preview), 429, "rate_limited");
        const back = v.removebg(waiter!.liveKey, preview);
        await product.untilArrived(3);
        product.releaseAll();
        await ok(back, "the waiter, back");
        await ok(running[1 - done]!, "the other holder's call");
        // The greedy caller and the newcomer were refused after the waiter: now it is their turn.
        const aAgain = v.removebg(greedy.liveKey, preview);
        const newAgain = v.removebg(newcomer!.liveKey, preview);
        await product.untilArrived(5);
        product.releaseAll();
        await ok(aAgain, "the greedy caller, in its turn");
        await ok(newAgain, "the newcomer, in its turn");
      } finally {
        product.releaseAll();
        await limiter.close();
      }
    });

    test("a test key waits behind live keys at a full cap, however long ago it was refused (until TEST_MAX_WAIT_MS)", { timeout: 30_000 }, async () => {
      const limiter = l.make();
      const product = heldProduct();
      try {
        const v = g.variant({ product: product.fn, config: { GLOBAL_CONCURRENCY: 1 }, limiter });
        const [holder, tester, payer] = await Promise.all([1, 2, 3].map(() => g.h.customer({ creditKrw: 1000 })));
        const running = v.removebg(holder!.liveKey, preview);
        await product.untilArrived(1);
        const t = await expectError(await v.removebg(tester!.testKey, preview), 429, "rate_limited");
        const p = await expectError(await v.removebg(payer!.liveKey, preview), 429, "rate_limited");
        assert.ok(Number(t.retryAfter) >= 1 && Number(p.retryAfter) >= 1);
        product.releaseOldest();
        await ok(running, "the holder's call");
        await expectError(await v.removebg(tester!.testKey, preview), 429, "rate_limited");
        const paid = v.removebg(payer!.liveKey, preview);
        await product.untilArrived(2);
        product.releaseAll();
        await ok(paid, "the live call, refused after the test call, goes first");
        const free = v.removebg(tester!.testKey, preview);
        await product.untilArrived(3);
        product.releaseAll();
        await ok(free, "then the test call");
      } finally {
        product.releaseAll();
        await limiter.close();
      }
    });
  });
}
