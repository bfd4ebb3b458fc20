// A reserve whose outcome the gateway does not know: the store answered with an error
// (a lost reply, or the pg adapter cutting the call short while the statement still
// waits for a connection or runs), so the call is answered 503, but the reserve may
// have committed, or may commit later. Nothing may stay held for it: the customer's
// credit must be spendable again, and a reserve statement that runs after the call
// ended must reserve nothing. Without that, a customer whose balance covers N calls
// gets fewer than N under load, with 402s for money nobody uses, until the sweeper
// (deadline + 60 s). The timing is injected by wrapping the ledger's reserve, so the
// test decides which comes first; the real statements run against the real store.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ReserveInput } from "../../src/billing/index.ts";
import { PREVIEW_PRICE_KRW } from "../../src/billing/index.ts";
import { assertSettled, drainReconciler, lostReply } from "../support/money-checks.ts";
import { heldPermits, orgLiveKey } from "../support/permits.ts";
import { balanceOf, expectError, gatewayHarness, productError, scriptedProduct, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";

const PRICE = PREVIEW_PRICE_KRW;

describe("a reserve or release with an unknown outcome leaves nothing held", () => {
  let g: GatewayHarness;
  before(async () => {
    g = await gatewayHarness();
  });
  after(async () => {
    await g?.close();
  });

  /** A customer whose balance covers exactly one preview call. */
  const oneCall = () => g.h.customer({ creditKrw: PRICE });
  const preview = { image_file: TINY_PNG, size: "preview" };

  /** A variant whose reserve does `step` instead of the ledger's own. */
  function withReserve(step: (input: ReserveInput, real: typeof g.h.services.billing.reserve) => Promise<never>) {
    const billing = g.h.services.billing;
    return g.variant({ services: { billing: { ...billing, reserve: (input) => step(input, billing.reserve) } } });
  }

  async function assertSpendableAgain(c: Awaited<ReturnType<typeof oneCall>>) {
    const s = await assertSettled(g.h.services.db, c.orgId);
    assert.equal(s.balanceKrw, PRICE);
    assert.deepEqual(await balanceOf(g.h, c.orgId), { balanceKrw: PRICE, availableKrw: PRICE });
    assert.equal(await heldPermits(g.h.services.limiter, orgLiveKey(c.orgId), 2), 0, "no org permit held");
    // The balance covers one call, and that call goes through.
    const res = await g.removebg(c.liveKey, preview);
    assert.equal(res.status, 200, await res.clone().text().catch(() => ""));
    await res.arrayBuffer();
    assert.equal(res.headers.get("x-pd-charged-krw"), String(PRICE));
    assert.equal(res.headers.get("x-pd-balance-krw"), "0");
  }

  test("committed, then the answer lost: 503, and the hold is given back", async () => {
    const c = await oneCall();
    const v = withReserve(async (input, real) => {
      const r = await real(input);
      assert.deepEqual(r, { ok: true });
      throw lostReply();
    });
    await expectError(await v.removebg(c.liveKey, preview), 503, "service_unavailable");
    await drainReconciler(g.h.services.reconciler);
    await assertSpendableAgain(c);
  });

  test("told the store is away first, the statement runs after the call ended: it reserves nothing", async () => {
    const c = await oneCall();
    let late: (() => ReturnType<typeof g.h.services.billing.reserve>) | undefined;
    const v = withReserve(async (input, real) => {
      late = () => real(input);
      throw lostReply();
    });
    await expectError(await v.removebg(c.liveKey, preview), 503, "service_unavailable");
    await drainReconciler(g.h.services.reconciler);
    // The statement the driver still sends, after the give-back.
    const r = await late!();
    assert.equal(r.ok, false, "a reserve of an ended request reserves nothing");
    await assertSpendableAgain(c);
  });

  test("the late statement runs while the give-back is asked again: whichever lands first, nothing stays held", async () => {
    const c = await oneCall();
    let late: Promise<unknown> | undefined;
    const v = withReserve(async (input, real) => {
      // Sent on its own while the caller hears 503 at once.
      late = new Promise((r) => setTimeout(r, 5)).then(() => real(input));
      throw lostReply();
    });
    await expectError(await v.removebg(c.liveKey, preview), 503, "service_unavailable");
    await late;
    await drainReconciler(g.h.services.reconciler);
    await assertSpendableAgain(c);
  });

  test("the store still away when the give-back is first tried: asked again until it answers", async () => {
    const c = await oneCall();
    const billing = g.h.services.billing;
    let refused = 0;
    const v = g.variant({
      services: {
        billing: {
          ...billing,
          reserve: async (input) => {
            await billing.reserve(input);
            throw lostReply();
          },
          abandon: async (input) => {
            // The first two tries meet the outage too.
            if (refused < 2) {
              refused++;
              throw lostReply();
            }
            return billing.abandon(input);
          },
        },
      },
    });
    await expectError(await v.removebg(c.liveKey, preview), 503, "service_unavailable");
    await drainReconciler(g.h.services.reconciler);
    assert.equal(refused, 2);
    await assertSpendableAgain(c);
  });

  test("a release that meets the store away is asked again until it answers", async () => {
    const c = await oneCall();
    const billing = g.h.services.billing;
    let refused = 0;
    const v = g.variant({
      product: scriptedProduct(() => productError(500, "inference_failed")).fn,
      sleep: async () => {},
      services: {
        billing: {
          ...billing,
          release: async (requestId) => {
            if (refused < 2) {
              refused++;
              throw lostReply();
            }
            return billing.release(requestId);
          },
        },
      },
    });
    await expectError(await v.removebg(c.liveKey, preview), 500, "inference_failed");
    await drainReconciler(g.h.services.reconciler);
    assert.equal(refused, 2);
    await assertSpendableAgain(c);
  });
});
