// Keys are stored only as HMAC-SHA-256(pepper, key text). The pepper lives outside
// the key table (environment or settings row), so a leaked copy of api_keys alone
// cannot be used to test guesses. WebCrypto keeps this runnable on Deno as well.
import type { Db } from "../db/index.ts";
import { randomBase62 } from "../db/random-id.ts";

const encoder = new TextEncoder();

export interface KeyHasher {
  /** Lower-case hex HMAC of the key text. */
  hash(keyText: string): Promise<string>;
}

export async function createKeyHasher(pepper: string): Promise<KeyHasher> {
  const cryptoKey = await crypto.subtle.importKey(
    "raw",
    encoder.encode(pepper),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return {
    async hash(keyText: string): Promise<string> {
      const mac = await crypto.subtle.sign("HMAC", cryptoKey, encoder.encode(keyText));
      return toHex(new Uint8Array(mac));
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

function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
