// Concurrency permits are short leases renewed while the request runs: a long request
// keeps its slot past the first lease, and the slot is free again when it ends. (A
// gateway that dies stops renewing, so its slots lapse within one lease: the lapse
// itself is covered by the limiter contract suite.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fixture } from "../support/harness.ts";
import { heldPermits, orgLiveKey } from "../support/permits.ts";
import { gatewayHarness, heldProduct, type GatewayHarness } from "./helpers.ts";

const LEASE_MS = 600; // renewed every 200 ms of real time

let g: GatewayHarness;
const product = heldProduct();
before(async () => {
  // Embedded stores: the in-process limiter runs on the harness's manual clock.
  g = await gatewayHarness({ embedded: true, product: product.fn, env: { PERMIT_LEASE_MS: String(LEASE_MS) } });
});
after(() => g.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a running request keeps its org permit beyond one lease, and frees it at the end", async () => {
  const c = await g.h.customer({ creditKrw: 1000 });
  const limiter = g.h.services.limiter;
  const call = g.removebg(c.liveKey, { image_file: fixture("photos/chelsea.png"), size: "preview" });
  await product.untilArrived(1);
  assert.equal(await heldPermits(limiter, orgLiveKey(c.orgId), 2), 1);

  // Twice: move the clock most of a lease on, then give the renew timer real time to run.
  // Without renewal the lease taken at the start would have lapsed by now.
  for (let i = 0; i < 2; i++) {
    g.clock.advance(LEASE_MS - 100);
    await sleep(LEASE_MS / 2);
  }
  assert.equal(await heldPermits(limiter, orgLiveKey(c.orgId), 2), 1, "the permit was renewed while the request ran");

  product.releaseAll();
  const res = await call;
  assert.equal(res.status, 200);
  assert.equal(await heldPermits(limiter, orgLiveKey(c.orgId), 2), 0, "released when the request ended");
});
