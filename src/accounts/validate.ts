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

/** RFC 5321's bound on a whole address. */
const ADDRESS_MAX = 254;
// The local part: atoms of RFC 5322 atext joined by dots, or one quoted string of
// printable ASCII without spaces (a backslash quotes the next character).
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const QUOTED = /^"(?:[\x21\x23-\x5b\x5d-\x7e]|\\[\x21-\x7e])*"$/;
// The domain: a host name (letters, digits, hyphens in labels of up to 63), with the
// root's trailing dot allowed. No address literal ("[203.0.113.9]") and no bare IP
// address: a last label of digits only is never a top-level domain.
const HOST_NAME = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$/;
const NUMERIC_LAST_LABEL = /(?:^|\.)\d+\.?$/;

/**
 * The address as typed (trimmed) when it is one we mail, else null: a dot-atom or quoted
 * local part, "@", a host name. ASCII only, because an address is matched without
 * regard to case in two places that must agree, Postgres's lower() (the account) and
 * JavaScript's toLowerCase() (the per-address limits): beyond ASCII they differ by
 * collation ("İ" is "i" to one and "i̇" to the other), and each spelling would get a
 * limit of its own. Comments, spaces and address literals are refused for the same
 * reason: each is another spelling of a mailbox (canonicalEmail folds the rest).
 */
export function normaliseEmail(email: string): string | null {
  const e = email.trim();
  const at = e.lastIndexOf("@");
  if (e.length > ADDRESS_MAX || at < 1) return null;
  const local = e.slice(0, at);
  const domain = e.slice(at + 1);
  if (!(DOT_ATOM.test(local) || QUOTED.test(local))) return null;
  if (!HOST_NAME.test(domain) || NUMERIC_LAST_LABEL.test(domain)) return null;
  return e;
}

/**
 * The one form of an address (from normaliseEmail) that every per-address limit counts:
 * lower case, a quoted local part unquoted, a "+tag" cut off (victim+1@ is victim@'s
 * mailbox at most providers), the domain's trailing dot dropped. Never used to send:
 * mail goes to the address as typed.
 */
export function canonicalEmail(address: string): string {
  const at = address.lastIndexOf("@");
  let local = address.slice(0, at);
  if (local.startsWith('"')) local = local.slice(1, -1).replace(/\\(.)/g, "$1");
  const plus = local.indexOf("+");
  if (plus > 0) local = local.slice(0, plus);
  return `${local}@${address.slice(at + 1).replace(/\.$/, "")}`.toLowerCase();
}
