// X-Api-Key → key context. A valid key is never refused for what other callers from its
// address sent; a missing, malformed or unknown key counts against the address, and
// past INVALID_KEY_LIMIT in the window such keys get 429 instead of 401 (spec §5.9). A
// missing or malformed key is never looked up; a well-formed one costs one lookup by
// its hash (an unknown hash is remembered: src/keys/unknown-hashes.ts).
import { fail, type Failure } from "../http/api-error.ts";
import { isWellFormedKey } from "../keys/format.ts";
import { createInvalidKeyGuard, type InvalidKeyGuard } from "../limits/index.ts";
import type { GatewayDeps } from "./deps.ts";
import type { GatewayPorts, KeyContext, KeyOwnerIds } from "./ports.ts";

/** The guard as INVALID_KEY_LIMIT and INVALID_KEY_WINDOW_S set it (the public route's and the playground's). */
export function invalidKeyGuard(deps: Pick<GatewayDeps, "limiter" | "settings">): InvalidKeyGuard {
  return createInvalidKeyGuard(deps.limiter, { limit: deps.settings.invalidKeyLimit, windowMs: deps.settings.invalidKeyWindowS * 1000 });
}

const GUARD_TITLE = "Too many requests with invalid API keys from this address";

export async function authenticate(
  keyText: string | null,
  ip: string,
  lookupKey: GatewayPorts["lookupKey"],
  guard: InvalidKeyGuard,
): Promise<{ ok: true; key: KeyContext } | (Failure & { owner?: KeyOwnerIds })> {
  const invalid = async (title: string): Promise<Failure> => {
    const verdict = await guard.invalidKey(ip);
    return verdict.over ? fail("rate_limited", GUARD_TITLE, verdict.retryAfterS) : fail("invalid_api_key", title);
  };
  if (!keyText) return invalid("Missing API key: send it in the X-Api-Key header");
  // The shape the key service issues (src/keys/format.ts): anything else is never looked up.
  if (!isWellFormedKey(keyText)) return invalid("Malformed API key");
  const found = await lookupKey(keyText);
  if (!found.ok) {
    if (found.code === "key_suspended") return { ...fail("key_suspended"), owner: found.owner };
    return invalid("Invalid API key: it does not exist, was deleted, expired or is dormant");
  }
  return { ok: true, key: found.key };
}
