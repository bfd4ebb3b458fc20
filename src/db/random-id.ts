// Random identifiers. Record IDs are a type prefix plus random base62 so they can't
// be enumerated or used to guess how many customers there are.

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// 248 = 4 * 62: bytes at or above it are thrown away so every character is equally
// likely (taking every byte mod 62 would favour the first 8 characters).
const ACCEPT_BELOW = 248;

/** `length` characters from [0-9A-Za-z], uniformly, from the platform CSPRNG. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    // Ask for a little more than needed (about 3% of bytes are rejected), within the
    // 65,536-byte cap of one getRandomValues call.
    const bytes = crypto.getRandomValues(new Uint8Array(Math.min(65_536, length - out.length + 8)));
    for (const b of bytes) {
      if (b >= ACCEPT_BELOW) continue;
      out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix = "org" | "app" | "key" | "usr";

/** e.g. "org_3fK9…" (22 random characters, about 131 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}
