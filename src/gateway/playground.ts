// The console's playground call: one POST /v1.0/removebg made by the gateway's own
// handler as an app's test key, for a caller the console has already signed in and
// checked to own the app. Keys are stored only as hashes, so there is no key text to
// present; instead, for this one call, the key lookup answers with the app's current
// test key (found by app ID and judged like a presented key). The handler is built once
// (with its own hold clock) and each call passes its own lookup. Everything after
// that is the public path unchanged: product state, the 12 MB body cap,
// parameters, the test key's minute/month/concurrency limits, preview size, resends,
// the request-log row and the answer with its headers. See docs/DECISIONS.md.
import { invalidKeyGuard } from "./authenticate.ts";
import type { GatewayDeps } from "./deps.ts";
import type { GatewayPorts } from "./ports.ts";
import { createRemoveBg } from "./removebg.ts";

export type KeyLookup = Awaited<ReturnType<GatewayPorts["lookupKey"]>>;

export interface PlaygroundCall {
  appId: string;
  /** The console request's own ID: the answer and the request-log row carry it. */
  requestId: string;
  /** The browser's request: its multipart body is passed on untouched (streamed). */
  request: Request;
  /** The runtime's env for that request (the peer address is read from it). */
  env: unknown;
}

export type Playground = (call: PlaygroundCall) => Promise<Response>;

/**
 * Stands in for the X-Api-Key header, which authentication requires to be present and
 * well-formed before it asks the lookup port. It is never looked up: the port below
 * ignores it. Not a key (no key has this hash), and nothing secret.
 */
const PLACEHOLDER_KEY = `pd_test_${"0".repeat(40)}`;

/** Request headers the gateway reads that come from the browser's request. */
const PASSED_HEADERS = ["content-type", "content-length", "x-forwarded-for"] as const;

export function createPlayground(deps: GatewayDeps, findTestKey: (appId: string) => Promise<KeyLookup>): Playground {
  // Built once and reused: same guard settings (and limiter counters) as the public route's.
  const guard = invalidKeyGuard(deps);
  const removeBg = createRemoveBg(deps, guard);
  return async ({ appId, requestId, request, env }) => {
    const found = await findTestKey(appId);
    // A live key can never be reached this way: the finder is asked for the test key
    // only, and this check keeps it so whatever the finder returns.
    const key: KeyLookup = found.ok && found.key.kind !== "test" ? { ok: false, code: "invalid_api_key" } : found;

    const headers = new Headers({ "x-api-key": PLACEHOLDER_KEY });
    for (const name of PASSED_HEADERS) {
      const v = request.headers.get(name);
      if (v !== null) headers.set(name, v);
    }
    const init: RequestInit & { duplex?: "half" } = { method: "POST", headers, body: request.body };
    if (request.body) init.duplex = "half"; // a streamed body (Node's fetch requires saying so)
    // The lookup answers this call's key only, whatever the placeholder says.
    return removeBg(new Request("http://gateway/v1.0/removebg", init), env, { requestId, lookupKey: async () => key });
  };
}
