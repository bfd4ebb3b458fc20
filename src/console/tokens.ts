// Random secrets for cookies and mailed links, and the hash under which they are
// stored: the database never holds a value that could be replayed.
import { createHash, createHmac } from "node:crypto";
import { randomBase62 } from "../db/index.ts";

/** 32 base62 characters: about 190 bits. */
export const newSecretToken = (): string => randomBase62(32);

/** HMAC-SHA-256 with SESSION_SECRET when set, else SHA-256 (the tokens are random enough). */
export function tokenHasher(secret: string | undefined): (token: string) => string {
  return secret
    ? (t) => createHmac("sha256", secret).update(t).digest("hex")
    : (t) => createHash("sha256").update(t).digest("hex");
}
