// Request IDs: "req_" + 26 base32 characters (time-sortable, 48-bit ms time + 80 random bits)
// so support can find a row by the ID a customer quotes and rows sort by arrival.
// The header that carries it is H.requestId (headers.ts).
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/** The published shape of every X-PD-Request-Id (the OpenAPI document says the same). */
export const REQUEST_ID_PATTERN = /^req_[0-9a-z]{26}$/;

export function isRequestId(v: unknown): v is string {
  return typeof v === "string" && REQUEST_ID_PATTERN.test(v);
}

/**
 * An id sent to us (the gateway's, on the internal product call) when it has our shape,
 * else a new one: a value we did not mint is never echoed back in X-PD-Request-Id.
 */
export function requestIdFrom(sent: string | null | undefined, now: number = Date.now()): string {
  return isRequestId(sent) ? sent : newRequestId(now);
}

export function newRequestId(now: number = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const rand = randomBytes16();
  let tail = "";
  for (let i = 0; i < 16; i++) tail += ALPHABET[rand[at + i]! % 32];
  return `req_${time}${tail}`;
}

// One call into the system's random source per 256 IDs instead of one per ID: in the
// refusal flood's CPU profile the per-ID call was a tenth of all the time.
const POOL = new Uint8Array(16 * 256);
let at = POOL.length;

/** Advances `at` to 16 fresh bytes of POOL, refilling it when used up; returns the pool. */
function randomBytes16(): Uint8Array {
  at += 16;
  if (at >= POOL.length) {
    crypto.getRandomValues(POOL);
    at = 0;
  }
  return POOL;
}
