import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { generateKey, isWellFormedKey, keyLabel } from "../../src/keys/format.ts";
import { constantTimeEqual, createKeyHasher } from "../../src/keys/hash.ts";
import { rejectReason, DORMANT_AFTER_MS } from "../../src/keys/states.ts";

test("generated keys carry their kind and 40 base62 characters", () => {
  const live = generateKey("live");
  const testKey = generateKey("test");
  assert.match(live, /^pd_live_[0-9A-Za-z]{40}$/);
  assert.match(testKey, /^pd_test_[0-9A-Za-z]{40}$/);
  const many = new Set(Array.from({ length: 1000 }, () => generateKey("test")));
  assert.equal(many.size, 1000);
});

test("well-formed keys are recognised and everything else is not", () => {
  assert.ok(isWellFormedKey(generateKey("live")));
  assert.ok(isWellFormedKey(generateKey("test")));
  const good = generateKey("live");
  for (const bad of [
    "",
    "pd_live_",
    good.slice(0, -1),
    good + "a",
    good.replace("pd_live_", "pd_prod_"),
    good.replace("pd_live_", "PD_LIVE_"),
    good.slice(0, -1) + "-",
    " " + good,
    good + "\n",
    "sk_live_" + good.slice(8),
  ]) {
    assert.equal(isWellFormedKey(bad), false, JSON.stringify(bad));
  }
});

test("the hash is HMAC-SHA-256 of the key under the pepper, in hex", async () => {
  const pepper = "a-pepper-of-some-length";
  const key = generateKey("live");
  const hasher = await createKeyHasher(pepper);
  const expected = createHmac("sha256", pepper).update(key).digest("hex");
  assert.equal(await hasher.hash(key), expected);
  const other = await createKeyHasher("another-pepper-value");
  assert.notEqual(await other.hash(key), expected);
});

test("constant-time comparison agrees with ===", () => {
  assert.ok(constantTimeEqual("abcdef", "abcdef"));
  assert.equal(constantTimeEqual("abcdef", "abcdeg"), false);
  assert.equal(constantTimeEqual("abcdef", "bbcdef"), false);
  assert.equal(constantTimeEqual("abc", "abcd"), false);
  assert.ok(constantTimeEqual("", ""));
});

test("labels show only the prefix and the last four characters", () => {
  assert.equal(keyLabel("pd_live_AbCd", "wXyZ"), "pd_live_AbCd…wXyZ");
});

test("key states: precedence and boundaries", () => {
  const base = { createdAt: 0, lastUsedAt: null, expiresAt: null, deletedAt: null, appDeletedAt: null, suspendedAt: null };
  assert.equal(rejectReason(base, 1000), null);
  assert.equal(rejectReason({ ...base, expiresAt: 1000 }, 999), null);
  assert.equal(rejectReason({ ...base, expiresAt: 1000 }, 1000), "expired");
  assert.equal(rejectReason(base, DORMANT_AFTER_MS), null);
  assert.equal(rejectReason(base, DORMANT_AFTER_MS + 1), "dormant");
  assert.equal(rejectReason({ ...base, lastUsedAt: 10 }, DORMANT_AFTER_MS + 1), null);
  assert.equal(rejectReason({ ...base, suspendedAt: 5 }, 10), "suspended");
  assert.equal(rejectReason({ ...base, suspendedAt: 5, expiresAt: 6 }, 10), "expired");
  assert.equal(rejectReason({ ...base, suspendedAt: 5, deletedAt: 6, expiresAt: 6 }, 10), "deleted");
  assert.equal(rejectReason({ ...base, appDeletedAt: 6 }, 10), "deleted");
});
