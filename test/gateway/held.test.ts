// The list of what a paid call took: given back newest first, whatever stands on a
// success kept then, and a give-back that fails does not stop the rest.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHeld } from "../../src/gateway/held.ts";

function recording() {
  const given: string[] = [];
  const give = (name: string) => async () => void given.push(name);
  return { given, give };
}

/** What a paid call takes, in its order: the body's budget, the claim, the permits, the hold. */
function heldAsAPaidCall(give: (name: string) => () => Promise<void>) {
  const held = createHeld();
  held.always(give("budget"));
  held.unlessSucceeded(give("claim"));
  held.always(give("permits"));
  held.unlessSucceeded(give("hold"));
  return held;
}

test("a call that fails gives everything back, newest first", async () => {
  const { given, give } = recording();
  const held = heldAsAPaidCall(give);
  await held.giveBackAll(() => assert.fail("no give-back failed"));
  assert.deepEqual(given, ["hold", "permits", "claim", "budget"]);
  assert.equal(held.succeeded, false);
});

test("a call that succeeds keeps what stands on success and gives back the rest", async () => {
  const { given, give } = recording();
  const held = heldAsAPaidCall(give);
  held.succeed();
  await held.giveBackAll(() => assert.fail("no give-back failed"));
  assert.deepEqual(given, ["permits", "budget"]);
  assert.equal(held.succeeded, true);
});

test("a give-back that fails is reported and the older ones still run, each once", async () => {
  const { given, give } = recording();
  const held = createHeld();
  held.always(give("budget"));
  held.always(async () => {
    throw new Error("store down");
  });
  held.always(() => {
    throw new Error("thrown before any promise");
  });
  const errors: string[] = [];
  await held.giveBackAll((err) => errors.push((err as Error).message));
  await held.giveBackAll((err) => errors.push((err as Error).message));
  assert.deepEqual(errors, ["thrown before any promise", "store down"]);
  assert.deepEqual(given, ["budget"]);
});
