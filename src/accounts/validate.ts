// Input checks for account changes. Each returns an error title, or null when fine.
// The bounds are defined here only: the service checks them, and the operator API's
// schemas (src/admin), the OpenAPI document built from those schemas and the console's
// forms read them (test/openapi/bounds.test.ts holds the document to them).

/** Owner-settable org daily limit (interface spec §8): 0 to 1,000,000 KRW. */
export const ORG_DAILY_LIMIT_MAX_KRW = 1_000_000;
/** An app's daily limit above the org's maximum could never bind, so it is capped there. */
export const APP_DAILY_LIMIT_MAX_KRW = ORG_DAILY_LIMIT_MAX_KRW;
/** Likewise a month of 31 maximal days. */
export const APP_MONTHLY_LIMIT_MAX_KRW = 31 * ORG_DAILY_LIMIT_MAX_KRW;
export const APP_NAME_MAX = 100;

/** "0 to 1,000,000": how a bound is written in titles and form hints. */
export function wonRange(max: number): string {
  return `0 to ${max.toLocaleString("en-US")}`;
}

export function checkLimit(value: number, max: number, what: string): string | null {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    return `${what} must be a whole number of won from ${wonRange(max)}`;
  }
  return null;
}

export function checkAppName(name: string): string | null {
  const n = name.trim();
  if (n.length === 0 || n.length > APP_NAME_MAX) return `App name must be 1 to ${APP_NAME_MAX} characters`;
  return null;
}

/**
 * Deliberately loose: one @, something either side, printable ASCII without spaces.
 * Verification proves the rest. ASCII because an address is matched without regard to
 * case in two places that must agree, Postgres's lower() (the account) and JavaScript's
 * toLowerCase() (the per-address mail limit): beyond ASCII they differ by collation
 * ("İ" is "i" to one and "i̇" to the other), and each spelling would get its own limit.
 */
export function normaliseEmail(email: string): string | null {
  const e = email.trim();
  if (e.length > 254 || !/^[\x21-\x3f\x41-\x7e]+@[\x21-\x3f\x41-\x7e]+$/.test(e)) return null;
  return e;
}
