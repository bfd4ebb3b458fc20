// X-Api-Key → key context. IPs that keep sending bad keys are turned away before any
// database lookup (spec §5.9), so key guessing costs us a counter check, not a query.
import { fail, type Failure } from "../http/api-error.ts";
import { isWellFormedKey } from "../keys/format.ts";
import type { InvalidKeyGuard } from "../limits/index.ts";
import type { GatewayPorts, KeyContext, KeyOwnerIds } from "./ports.ts";

export async function authenticate(
  keyText: string | null,
  ip: string,
  lookupKey: GatewayPorts["lookupKey"],
  guard: InvalidKeyGuard,
): Promise<{ ok: true; key: KeyContext } | (Failure & { owner?: KeyOwnerIds })> {
  const blocked = await guard.check(ip);
  if (blocked.blocked) {
    return fail("rate_limited", "Too many requests with invalid API keys from this address", blocked.retryAfterS);
  }
  // check() and recordInvalid() are two steps, so many concurrent guesses can all pass
  // the check; the count after recording decides too, which caps the 401s at the limit.
  const invalid = async (title: string): Promise<Failure> => {
    const count = await guard.recordInvalid(ip);
    if (count > guard.limit) {
      return fail("rate_limited", "Too many requests with invalid API keys from this address", Math.ceil(guard.windowMs / 1000));
    }
    return fail("invalid_api_key", title);
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
