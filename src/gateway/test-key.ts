// "A test key means preview" (interface spec, test keys): decided here only. The
// gateway makes a test key's call at this size whatever was asked (and tells the
// product so with X-PD-Force-Size), reserves and logs by its tier, and says so with
// X-PD-Test-Size on every answer to a test key. Also the test key's own limits before
// the product runs: its calls per minute and its free calls.
import type { KeyKind } from "../keys/format.ts";
import type { Size } from "../contract/tiers.ts";
import { fail, type Failure } from "../http/api-error.ts";
import { retryAfterSeconds } from "../http/retry-after.ts";
import type { Limiter } from "../limits/index.ts";
import type { GatewayPorts, KeyContext } from "./ports.ts";
import { TEST_PER_MINUTE, TEST_WINDOW_MS, testMinuteKey } from "./rate-headers.ts";

export const TEST_KEY_SIZE = "preview" satisfies Size;

/** The size a key's calls are made at whatever they ask for; undefined: as asked. */
export function forcedSize(kind: KeyKind): Size | undefined {
  return kind === "test" ? TEST_KEY_SIZE : undefined;
}

/** The test key's calls-per-minute window, counted before its permits are asked for. */
export async function countTestMinute(limiter: Limiter, keyId: string): Promise<{ ok: true } | Failure> {
  const perMinute = await limiter.hit(testMinuteKey(keyId), TEST_PER_MINUTE, TEST_WINDOW_MS);
  if (perMinute.allowed) return { ok: true };
  return fail("test_quota_exceeded", `Test keys allow ${TEST_PER_MINUTE} calls per minute`, retryAfterSeconds(perMinute.retryAfterMs));
}

/**
 * One free call of the key's quota: what is left after it, and how to give it back
 * (errors are free, and a replay gives its call back whatever its outcome: it needs a
 * free call left to run, but uses none).
 */
export async function useFreeCall(
  ports: Pick<GatewayPorts, "consumeTestCall" | "refundTestCall">,
  key: Pick<KeyContext, "orgId" | "testQuota">,
  requestId: string,
): Promise<{ ok: true; remaining: number; giveBack: () => Promise<void> } | Failure> {
  const lifetime = key.testQuota === "lifetime";
  // By request ID: a consume or refund that meets a store error is given back (src/billing/given-back.ts).
  const quota = await ports.consumeTestCall({ orgId: key.orgId, lifetime, requestId });
  if (!quota.ok) return quota;
  return { ok: true, remaining: quota.remaining, giveBack: () => ports.refundTestCall({ orgId: key.orgId, period: quota.period, requestId }) };
}
