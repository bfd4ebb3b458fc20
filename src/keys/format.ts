// API key text: "pd_test_" or "pd_live_" followed by 40 random base62 characters
// (about 238 bits), generated from the platform CSPRNG without modulo bias.
import { randomBase62 } from "../db/random-id.ts";

export type KeyKind = "test" | "live";

export const KEY_RANDOM_LENGTH = 40;
const KEY_PATTERN = /^pd_(test|live)_[0-9A-Za-z]{40}$/;

export function keyPrefixFor(kind: KeyKind): string {
  return kind === "live" ? "pd_live_" : "pd_test_";
}

export function generateKey(kind: KeyKind): string {
  return keyPrefixFor(kind) + randomBase62(KEY_RANDOM_LENGTH);
}

export function isWellFormedKey(s: string): boolean {
  return KEY_PATTERN.test(s);
}

/** The kind a well-formed key announces in its prefix. */
export function kindOfKey(s: string): KeyKind {
  return s.startsWith("pd_live_") ? "live" : "test";
}

/** What may be stored and shown of a key: its type prefix + 4 characters, and its last 4. */
export function displayParts(key: string): { prefix: string; last4: string } {
  return { prefix: key.slice(0, 12), last4: key.slice(-4) };
}

/** "pd_live_AbCd…wXyZ": enough to tell keys apart in a console or a log, useless to an attacker. */
export function keyLabel(prefix: string, last4: string): string {
  return `${prefix}…${last4}`;
}
