// Path ids of the operator API (and any route that looks a record up by the id in its
// path). An id we never issued cannot name a record, so a value outside the shape of
// our ids is answered as "not found" before it reaches a store: Postgres refuses text
// with a NUL byte outright (an error, not an empty result), and nothing else about a
// malformed id is worth a query either. The shapes are loose on length on purpose: an
// id the store holds must never be refused here.
import type { Context } from "hono";
import { ApiError } from "./api-error.ts";
import { isRequestId } from "./request-id.ts";

/** Records ids: a type prefix and base62 (src/db/random-id.ts); request ids: request-id.ts. */
const SHAPES = {
  orgId: (v: string) => /^org_[0-9A-Za-z]{1,64}$/.test(v),
  appId: (v: string) => /^app_[0-9A-Za-z]{1,64}$/.test(v),
  keyId: (v: string) => /^key_[0-9A-Za-z]{1,64}$/.test(v),
  requestId: isRequestId,
} as const;

export type PathIdName = keyof typeof SHAPES;

/** True when `value` has the shape of an id named `name`. */
export function isPathId(name: PathIdName, value: string): boolean {
  return SHAPES[name](value);
}

/** The path parameter `name`, or 404 not_found naming `what` when it cannot be one of our ids. */
export function pathId(c: Context, name: PathIdName, what: string): string {
  const value = c.req.param(name) ?? "";
  if (!isPathId(name, value)) throw new ApiError("not_found", `${what} not found`);
  return value;
}
