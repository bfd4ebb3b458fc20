// The remembered key rows on their own (known-keys.ts): the time limit, the reading
// that started before a forget, and a key's use stamped into its row.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createKnownKeys, KNOWN_KEY_MEMORY_MS } from "../../src/keys/known-keys.ts";
import type { KeyJoinRow } from "../../src/keys/records.ts";

const row = (keyId: string) => ({ key_id: keyId, last_used_at: null }) as unknown as KeyJoinRow;

test("a row is believed for KNOWN_KEY_MEMORY_MS after it was read", () => {
  let t = 1_000;
  const k = createKnownKeys(() => t);
  k.remember("h1", row("key_1"), k.reading());
  t += KNOWN_KEY_MEMORY_MS - 1;
  assert.equal(k.get("h1")?.key_id, "key_1");
  t += 1;
  assert.equal(k.get("h1"), undefined);
});

test("a row read across a forget is not remembered: it may predate the change", () => {
  const k = createKnownKeys(() => 0);
  const reading = k.reading();
  k.forget();
  k.remember("h1", row("key_1"), reading);
  assert.equal(k.get("h1"), undefined);
  k.remember("h1", row("key_1"), k.reading());
  assert.equal(k.get("h1")?.key_id, "key_1");
  k.forget();
  assert.equal(k.get("h1"), undefined);
});

test("a use is stamped into the remembered row of that key only", () => {
  const k = createKnownKeys(() => 0);
  k.remember("h1", row("key_1"), k.reading());
  k.remember("h2", row("key_2"), k.reading());
  k.used("key_1", 5_000);
  assert.equal(k.get("h1")?.last_used_at, 5_000);
  assert.equal(k.get("h2")?.last_used_at, null);
});
