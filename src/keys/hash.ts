// Keys are stored only as HMAC-SHA-256(pepper, key text). The pepper lives outside
// the key table (environment or settings row), so a leaked copy of api_keys alone
// cannot be used to test guesses. node:crypto's HMAC (Deno has it too) is synchronous:
// WebCrypto's sign cost a tenth of the gateway's CPU per unknown-key refusal in its
// profile, most of it in the hand-over to and from its job queue.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Db } from "../db/index.ts";
import { randomBase62 } from "../db/random-id.ts";

export interface KeyHasher {
  /** Lower-case hex HMAC of the key text. */
  hash(keyText: string): Promise<string>;
}

export async function createKeyHasher(pepper: string): Promise<KeyHasher> {
  return {
    async hash(keyText: string): Promise<string> {
      return createHmac("sha256", pepper).update(keyText, "utf8").digest("hex");
    },
  };
}

/**
 * Equal-length string comparison whose time does not depend on where the strings
 * differ. The lookup already found the row by this hash through the index; comparing
 * again costs nothing and keeps the check honest if the lookup ever changes.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * A check of presented values against one secret (the operator token) whose time tells
 * neither where a guess differs nor how long the secret is: both sides are compared as
 * SHA-256 digests, of one length whatever was sent. The time of hashing the presented
 * value depends on its own length only, which its sender knows.
 */
export function secretMatcher(secret: string): (presented: string) => boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  const expected = digest(secret);
  return (presented) => timingSafeEqual(digest(presented), expected);
}

const PEPPER_SETTING = "key_pepper";

/**
 * The configured pepper (KEY_PEPPER) if given; otherwise the one kept in the settings
 * table, generated on first start. Two processes starting together agree: the insert
 * does nothing if another one won, and both read back the stored value.
 */
export async function loadOrCreatePepper(db: Db, configured?: string): Promise<string> {
  if (configured) return configured;
  await db.query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [
    PEPPER_SETTING,
    randomBase62(43),
  ]);
  const rows = await db.query<{ value: string }>("SELECT value FROM settings WHERE key = $1", [PEPPER_SETTING]);
  return rows[0].value;
}
